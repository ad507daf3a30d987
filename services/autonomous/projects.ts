// Where an autonomous workflow may work (issue 13 item 7; issue 25 item 2). A `project_path` is accepted
// only when
//   1. it resolves (realpath: every symlink followed) to a directory strictly inside the caller's
//      tenant's own folder of one of the roots of SVC_AUTONOMOUS_PROJECT_ROOTS (a path list separated
//      like PATH; default `<data dir>/projects`; the roots are realpath'd too): `<root>/tenant-<id>`
//      (tenantProjectRoot). A path inside a root but outside the tenant's folder (another tenant's
//      repository) answers 403 before anything of it is read: that decision is taken on the path as
//      given and again on its realpath, and no git command runs before both pass;
//   2. it is inside a Git work tree whose top level is itself strictly inside that folder (a directory
//      under the root that only sits inside some enclosing checkout, such as a data dir kept inside the
//      service's own clone, is refused): `git rev-parse --is-inside-work-tree --show-toplevel`, run with
//      execFile (no shell), a timeout, a minimal environment, no system config and fsmonitor off, so
//      the repository's own configuration cannot run a command.
// Anything else answers 400 with one message that names the setting (never which check failed or what
// exists on the host, so the answer cannot be used to probe the server's file system). The project is
// the repository's top level; its tenant-scoped `projects` row and the user's `user_projects` row are
// created or reused (db/repositories/workspace/projects.ts). A `projects` row alone grants nothing:
// remote workspace sessions create them for paths on users' own machines, so the folder is the rule.
// Projects are tenant-scoped, so a caller without a tenant (a platform admin included) has no folder
// (create-workflows.ts answers 403 first).
import { execFile } from 'node:child_process';
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Settings } from '../../config/settings.ts';
import type { DatabaseHandle } from '../../db/client.ts';
import { projectsRepository } from '../../db/repositories/workspace/projects.ts';
import { BadRequestError, ForbiddenError } from '../../domain/errors.ts';

export const PROJECT_PATH_ERROR = 'project_path must be a Git repository under SVC_AUTONOMOUS_PROJECT_ROOTS';
export const OTHER_TENANT_PROJECT_ERROR =
  "project_path must be inside your tenant's project folder (tenant-<id> under SVC_AUTONOMOUS_PROJECT_ROOTS)";
const GIT_TIMEOUT_MS = 10_000;

/** A tenant's own folder under a project root: `<root>/tenant-<id>`. */
export const tenantProjectRoot = (root: string, tenantId: number) => path.join(root, `tenant-${tenantId}`);

/** The configured roots, absolute (not yet realpath'd). */
export function projectRoots(s: Pick<Settings, 'SVC_DATA_DIR' | 'SVC_AUTONOMOUS_PROJECT_ROOTS'>): string[] {
  const given = (s.SVC_AUTONOMOUS_PROJECT_ROOTS ?? '')
    .split(path.delimiter)
    .map((p) => p.trim())
    .filter(Boolean);
  const roots = given.length > 0 ? given : [path.join(s.SVC_DATA_DIR, 'projects')];
  return [...new Set(roots.map((r) => path.resolve(r)))];
}

/** The folders a tenant's projects may be in, one per root (none without a tenant), as configured. */
export function tenantProjectFolders(
  s: Pick<Settings, 'SVC_DATA_DIR' | 'SVC_AUTONOMOUS_PROJECT_ROOTS'>,
  tenantId: number | null,
): string[] {
  return tenantId == null ? [] : projectRoots(s).map((r) => tenantProjectRoot(r, tenantId));
}

const strictlyInside = (child: string, root: string) =>
  child !== root && child.startsWith(root.endsWith(path.sep) ? root : root + path.sep);

const insideOrAt = (child: string, dir: string) => child === dir || strictlyInside(child, dir);

async function realRoots(roots: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const r of roots) {
    try {
      out.push(await realpath(r));
    } catch {
      // A root that does not exist holds no project.
    }
  }
  return out;
}

function gitTopLevel(dir: string): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(
      'git',
      ['-c', 'core.fsmonitor=false', '-C', dir, 'rev-parse', '--is-inside-work-tree', '--show-toplevel'],
      {
        timeout: GIT_TIMEOUT_MS,
        maxBuffer: 64 * 1024,
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          GIT_CONFIG_NOSYSTEM: '1',
          GIT_CONFIG_GLOBAL: '/dev/null',
          LC_ALL: 'C',
        },
        windowsHide: true,
      },
      (err, stdout) => {
        if (err) return resolve(null);
        const [inside, top] = String(stdout).split('\n');
        resolve(inside === 'true' && top ? top : null);
      },
    );
  });
}

/**
 * The repository top level (realpath) for `projectPath` in the tenant's folder, or throws (400, or 403
 * for a path inside a root but outside the tenant's folder). Exported for tests and for re-checks
 * before each run (a path may have changed since creation).
 */
export async function resolveProjectPath(
  settings: Pick<Settings, 'SVC_DATA_DIR' | 'SVC_AUTONOMOUS_PROJECT_ROOTS'>,
  tenantId: number,
  projectPath: string,
): Promise<string> {
  const refuse = () => new BadRequestError(PROJECT_PATH_ERROR);
  if (typeof projectPath !== 'string' || projectPath.length === 0 || projectPath.includes('\0'))
    throw refuse();
  if (!path.isAbsolute(projectPath)) throw refuse();
  const given = projectRoots(settings);
  const roots = await realRoots(given);
  // Another tenant's folder, decided on the path as given (nothing of it is read: no existence probe).
  const asGiven = path.resolve(projectPath);
  for (const root of [...given, ...roots])
    if (strictlyInside(asGiven, root) && !insideOrAt(asGiven, tenantProjectRoot(root, tenantId)))
      throw new ForbiddenError(OTHER_TENANT_PROJECT_ERROR);
  let real: string;
  try {
    real = await realpath(projectPath);
    if (!(await stat(real)).isDirectory()) throw refuse();
  } catch {
    throw refuse();
  }
  const root = roots.find((r) => strictlyInside(real, r));
  if (!root) throw refuse();
  // ...and on where it really leads (a symlink into another tenant's folder).
  const own = tenantProjectRoot(root, tenantId);
  if (!insideOrAt(real, own)) throw new ForbiddenError(OTHER_TENANT_PROJECT_ERROR);
  const top = await gitTopLevel(real);
  if (!top) throw refuse();
  let realTop: string;
  try {
    realTop = await realpath(top);
  } catch {
    throw refuse();
  }
  if (!strictlyInside(realTop, own)) throw refuse();
  return realTop;
}

export interface ProjectRef {
  projectId: number;
  /** The repository top level, realpath'd: what the workflow stores as project_path. */
  path: string;
}

/**
 * Confines `projectPath` to the tenant's folder (400 / 403 otherwise) and creates or reuses the tenant's project for it and the
 * user's user_projects row.
 */
export async function ensureAutonomousProject(
  deps: {
    database: DatabaseHandle;
    settings: Pick<Settings, 'SVC_DATA_DIR' | 'SVC_AUTONOMOUS_PROJECT_ROOTS'>;
  },
  owner: { tenantId: number; userId: number },
  projectPath: string,
): Promise<ProjectRef> {
  const real = await resolveProjectPath(deps.settings, owner.tenantId, projectPath);
  const projectId = await deps.database.transaction(async (tx) => {
    const projects = projectsRepository(tx.sql);
    const id = await projects.upsert(owner.tenantId, real, path.basename(real).slice(0, 200), owner.userId);
    await tx.sql.query(
      'INSERT INTO user_projects (user_id, project_id) VALUES (?, ?) ON CONFLICT (user_id, project_id) DO NOTHING',
      [owner.userId, id],
    );
    return id;
  });
  return { projectId, path: real };
}
