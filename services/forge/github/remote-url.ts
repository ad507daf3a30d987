// Which GitHub repository a project's `origin` remote names, if any (forge selection,
// services/forge/forge-for-project.ts, and GitHubForge.ensureRepository read it the same way).
// A project is on GitHub when its origin is `<configured web URL>/<owner>/<repo>` or the same with
// `.git`, on the configured host only (GitHub Enterprise: SVC_GITHUB_WEB_URL). SSH remotes, other hosts
// and URLs with credentials in them (`https://user:token@...`) do not count: the forge authenticates
// with its own token, never with one a project stored in its config.
// Parsing is by hand and linear (no regex over the whole URL).
import { git } from '../git.ts';

export interface GitHubRepoName {
  owner: string;
  repo: string;
}

const OWNER_MAX = 39;
const REPO_MAX = 100;

function nameOk(s: string, max: number, extra: string): boolean {
  if (!s || s.length > max || s === '.' || s === '..') return false;
  for (const ch of s) {
    const c = ch.charCodeAt(0);
    const alnum = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
    if (!alnum && !extra.includes(ch)) return false;
  }
  return true;
}

/** `owner/repo` when both parts are valid GitHub names; the repo key of the GitHub forge. */
export function parseRepoKey(key: string): GitHubRepoName | null {
  const slash = key.indexOf('/');
  if (slash < 0 || key.indexOf('/', slash + 1) >= 0) return null;
  const owner = key.slice(0, slash);
  const repo = key.slice(slash + 1);
  if (!nameOk(owner, OWNER_MAX, '-') || !nameOk(repo, REPO_MAX, '-._') || repo.endsWith('.git')) return null;
  return { owner, repo };
}

/** The repository a remote URL names on the GitHub at `webUrl`, else null. */
export function parseGitHubRemote(remote: string, webUrl: string): GitHubRepoName | null {
  let url: URL;
  let web: URL;
  try {
    url = new URL(remote.trim());
    web = new URL(webUrl);
  } catch {
    return null;
  }
  if (url.protocol !== web.protocol || url.host.toLowerCase() !== web.host.toLowerCase()) return null;
  if (url.username || url.password || url.search || url.hash) return null;
  const prefix = web.pathname.endsWith('/') ? web.pathname : `${web.pathname}/`;
  if (!url.pathname.startsWith(prefix)) return null;
  let rest = url.pathname.slice(prefix.length);
  if (rest.endsWith('/')) rest = rest.slice(0, -1);
  if (rest.endsWith('.git')) rest = rest.slice(0, -4);
  return parseRepoKey(rest);
}

/** The clone URL of a repository on the GitHub at `webUrl` (no credentials: those go in the env). */
export function cloneUrl(webUrl: string, name: GitHubRepoName): string {
  const base = webUrl.endsWith('/') ? webUrl : `${webUrl}/`;
  return new URL(`${name.owner}/${name.repo}.git`, base).href;
}

/** The project's `origin` URL (read only; no hooks, no user or system config), or null. */
export async function originOf(projectPath: string): Promise<string | null> {
  const r = await git(['config', '--get', 'remote.origin.url'], { cwd: projectPath, check: false }).catch(
    () => null,
  );
  const url = r?.code === 0 ? r.stdout.trim() : '';
  return url || null;
}
