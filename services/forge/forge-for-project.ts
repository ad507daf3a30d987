// Which forge a project's autonomous workflows use (issue 15 item 1; issue 25 item 2): a project whose
// `origin` remote is `<SVC_GITHUB_WEB_URL>/<owner>/<repo>(.git)` uses the GitHub forge with its
// tenant's token (services/autonomous/tenant-settings.ts githubTokenForTenant: the tenant's own, or
// SVC_GITHUB_TOKEN only for the one tenant SVC_GITHUB_TOKEN_TENANT_ID names). No token is ever shared
// across tenants. A GitHub project of a tenant without a token fails with ForgePermissionError naming
// the fix when the deployment uses GitHub (SVC_GITHUB_TOKEN is set, for some tenant) instead of using
// another tenant's token; where the operator configured no GitHub token, it uses the local forge as every
// other project does (no origin, another host, SSH remotes).
// Callers hold the workflow's row and ask by its tenant and project path (services/autonomous/
// workspace.ts forgeOf). One GitHub forge per token (a changed token gets a new one); the origin
// decision per project path is cached for the selector's life (an origin change takes effect on the
// next process, like the settings).
import type { Settings } from '../../config/settings.ts';
import type { DatabaseHandle } from '../../db/client.ts';
import { ForgePermissionError } from '../../domain/forge/errors.ts';
import type { Forge, ForgeProject, ForgeRepository } from '../../domain/forge/types.ts';
import { githubTokenForTenant } from '../autonomous/tenant-settings.ts';
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
  | 'SVC_GITHUB_TOKEN_TENANT_ID'
  | 'SVC_ENCRYPTION_KEY'
  | 'SECRET_KEY'
  | 'production'
>;

export interface ForgeSelector {
  /** The forge of a tenant's project at `projectPath` (null path: the local forge). */
  forProject(projectPath: string | null, tenantId: number | null): Promise<ProjectForge>;
  local(): ProjectForge;
}

/** The message of a GitHub project whose tenant has no token. */
export const noGitHubTokenMessage = (tenantId: number | null) =>
  `This project's origin is on GitHub, but tenant ${tenantId ?? '(none)'} has no GitHub token: a tenant admin sets one with PUT /api/tenants/${tenantId ?? ':tenant_id'}/autonomous ({"github_token": "..."})`;

/** A GitHub forge with `token` as the settings configure the rest (API and web URLs, limits). */
export function githubForge(
  settings: ForgeSettings,
  token: string,
  opts: { worktreeRoot?: string } = {},
): GitHubForge {
  return new GitHubForge({
    dataDir: settings.dataDir,
    worktreeRoot: opts.worktreeRoot,
    maxChangedFiles: settings.AUTONOMOUS_MAX_CHANGED_FILES,
    ciTimeoutSeconds: settings.forge.ci_timeout_seconds,
    diffMaxBytes: settings.forge.diff_max_bytes,
    apiUrl: settings.SVC_GITHUB_API_URL,
    webUrl: settings.SVC_GITHUB_WEB_URL,
    token,
    egress: egressGuardFor(settings),
  });
}

export function forgeSelector(
  settings: ForgeSettings,
  database: DatabaseHandle,
  opts: { worktreeRoot?: string; local?: () => ProjectForge } = {},
): ForgeSelector {
  let local: ProjectForge | undefined;
  // Keyed by the token itself, kept in this closure only (never logged, never serialised).
  const githubByToken = new Map<string, GitHubForge>();
  const onGitHub = new Map<string, boolean>();
  const sel: ForgeSelector = {
    local: () => {
      local ??=
        opts.local?.() ?? localForgeFromSettings(settings, database, { worktreeRoot: opts.worktreeRoot });
      return local;
    },
    async forProject(projectPath, tenantId) {
      if (!projectPath) return sel.local();
      let github = onGitHub.get(projectPath);
      if (github === undefined) {
        const origin = await originOf(projectPath);
        github = !!origin && !!parseGitHubRemote(origin, settings.SVC_GITHUB_WEB_URL);
        onGitHub.set(projectPath, github);
      }
      if (!github) return sel.local();
      const token = await githubTokenForTenant({ database, settings }, tenantId);
      if (!token) {
        if (settings.SVC_GITHUB_TOKEN) throw new ForgePermissionError(noGitHubTokenMessage(tenantId), 401);
        return sel.local();
      }
      let gh = githubByToken.get(token);
      if (!gh) {
        gh = githubForge(settings, token, { worktreeRoot: opts.worktreeRoot });
        githubByToken.set(token, gh);
      }
      return gh;
    },
  };
  return sel;
}
