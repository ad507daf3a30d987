// Which forge a project's autonomous workflows use (issue 15 item 1): a project whose `origin` remote
// is `<SVC_GITHUB_WEB_URL>/<owner>/<repo>(.git)` uses the GitHub forge when SVC_GITHUB_TOKEN is set;
// every other project (no origin, another host, SSH remotes, no token configured) uses the local forge.
// Callers hold the workflow's row and ask by its project path (services/autonomous/workspace.ts forgeOf).
// One forge instance of each kind per selector (they hold no per-project state beyond caches); the
// decision per project path is cached for the selector's life (an origin change takes effect on the
// next process, like the settings).
import type { Settings } from '../../config/settings.ts';
import type { DatabaseHandle } from '../../db/client.ts';
import type { Forge, ForgeProject, ForgeRepository } from '../../domain/forge/types.ts';
import { egressGuardFor } from '../egress/guard.ts';
import { GitHubForge } from './github/github-forge.ts';
import { originOf, parseGitHubRemote } from './github/remote-url.ts';
import { localForgeFromSettings } from './local-forge.ts';

/** What the autonomous workspace needs of a forge beyond the interface (both forges have it). */
export type ProjectForge = Forge & {
  readonly worktreeRoot: string;
  refreshFromProject(
    project: ForgeProject,
  ): Promise<{ status: 'updated' | 'up_to_date' | 'ahead' | 'diverged'; sha: string }>;
  pullCommand(repo: ForgeRepository): string[];
};

type ForgeSettings = Pick<
  Settings,
  | 'dataDir'
  | 'forge'
  | 'egress'
  | 'AUTONOMOUS_MAX_CHANGED_FILES'
  | 'SVC_GITHUB_API_URL'
  | 'SVC_GITHUB_WEB_URL'
  | 'SVC_GITHUB_TOKEN'
>;

export interface ForgeSelector {
  /** The forge of the project at `projectPath` (null path: the local forge). */
  forProject(projectPath: string | null): Promise<ProjectForge>;
  local(): ProjectForge;
  /** The GitHub forge, or null when no token is configured. */
  github(): GitHubForge | null;
}

/** The GitHub forge as the settings configure it (null without a token). */
export function githubForgeFromSettings(
  settings: ForgeSettings,
  opts: { worktreeRoot?: string } = {},
): GitHubForge | null {
  if (!settings.SVC_GITHUB_TOKEN) return null;
  return new GitHubForge({
    dataDir: settings.dataDir,
    worktreeRoot: opts.worktreeRoot,
    maxChangedFiles: settings.AUTONOMOUS_MAX_CHANGED_FILES,
    ciTimeoutSeconds: settings.forge.ci_timeout_seconds,
    diffMaxBytes: settings.forge.diff_max_bytes,
    apiUrl: settings.SVC_GITHUB_API_URL,
    webUrl: settings.SVC_GITHUB_WEB_URL,
    token: settings.SVC_GITHUB_TOKEN,
    egress: egressGuardFor(settings),
  });
}

export function forgeSelector(
  settings: ForgeSettings,
  database: DatabaseHandle,
  opts: { worktreeRoot?: string; github?: GitHubForge; local?: () => ProjectForge } = {},
): ForgeSelector {
  let local: ProjectForge | undefined;
  let github: GitHubForge | null | undefined = opts.github;
  const decided = new Map<string, 'github' | 'local'>();
  const sel: ForgeSelector = {
    local: () => {
      local ??=
        opts.local?.() ?? localForgeFromSettings(settings, database, { worktreeRoot: opts.worktreeRoot });
      return local;
    },
    github: () => {
      if (github === undefined)
        github = githubForgeFromSettings(settings, { worktreeRoot: opts.worktreeRoot });
      return github;
    },
    async forProject(projectPath) {
      const gh = sel.github();
      if (!gh || !projectPath) return sel.local();
      let kind = decided.get(projectPath);
      if (!kind) {
        const origin = await originOf(projectPath);
        kind = origin && parseGitHubRemote(origin, gh.webUrl) ? 'github' : 'local';
        decided.set(projectPath, kind);
      }
      return kind === 'github' ? gh : sel.local();
    },
  };
  return sel;
}
