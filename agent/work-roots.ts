// Where a session's CLI may run. A `project_path` from the server is resolved on this machine (`~`,
// relative to work_dir, then realpath, so symlinks and `..` are followed to where they really lead) and
// accepted only inside one of the configured work roots, and neither inside nor above one of the agent's
// own directories (config.json with the agent token, the installed agent files). A root that is itself inside an agent
// directory is a configuration error: the agent refuses to start rather than serve it.
import { realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { ConfigError } from './config.ts';

/** A configuration error: main.ts reports it and exits 1 (the agent does not start). */
export class WorkRootsError extends ConfigError {}

export interface WorkRoots {
  roots: string[];
  /** The agent's own directories: never a project, even inside a root. */
  protectedDirs: string[];
}

/** `child` is `parent` or lies below it (both already resolved). */
export function isWithin(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

function real(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/**
 * Resolves the configured roots (default: work_dir, else the home directory) and checks them against the
 * agent's directories. Throws WorkRootsError for a missing root or one inside an agent directory.
 */
export function resolveWorkRoots(
  config: { work_roots: string[]; work_dir: string },
  agentDirs: string[],
): WorkRoots {
  const protectedDirs = [...new Set(agentDirs.map((d) => real(d) ?? resolve(d)))];
  const configured = config.work_roots.length ? config.work_roots : [config.work_dir || homedir()];
  const roots: string[] = [];
  for (const raw of configured) {
    const expanded = raw === '~' || raw.startsWith('~/') ? homedir() + raw.slice(1) : raw;
    if (!isAbsolute(expanded)) throw new WorkRootsError(`work root "${raw}" must be an absolute path`);
    const root = real(expanded);
    if (!root || !isDirectory(root))
      throw new WorkRootsError(`work root "${raw}" is not an existing directory`);
    const inside = protectedDirs.find((d) => isWithin(d, root));
    if (inside)
      throw new WorkRootsError(
        `work root "${raw}" lies inside the agent's own directory ${inside} (which holds its token); ` +
          'choose work_roots outside it',
      );
    roots.push(root);
  }
  return { roots, protectedDirs };
}

export type ProjectPathResult = { ok: true; path: string } | { ok: false; error: string };

/** The real directory a session may run in, or the reason it may not. */
export function confineProjectPath(
  requested: string | undefined,
  workDir: string,
  limits: WorkRoots,
): ProjectPathResult {
  if (!requested) return { ok: false, error: 'project_path is required' };
  if (requested.includes('\0')) return { ok: false, error: 'project_path contains a NUL character' };
  const expanded =
    requested === '~' || requested.startsWith('~/') ? homedir() + requested.slice(1) : requested;
  const absolute = resolve(workDir || homedir(), expanded);
  const path = real(absolute);
  if (!path || !isDirectory(path))
    return { ok: false, error: `project_path ${absolute} is not a directory on this machine` };
  // Neither inside an agent directory nor above one (a CLI may write anywhere below its project).
  const own = limits.protectedDirs.find((d) => isWithin(d, path) || isWithin(path, d));
  if (own)
    return {
      ok: false,
      error: `project_path ${absolute} is or contains the agent's own directory; refused`,
    };
  if (!limits.roots.some((root) => isWithin(root, path)))
    return {
      ok: false,
      error: `project_path ${absolute} is outside this machine's work roots (${limits.roots.join(', ')}); refused`,
    };
  return { ok: true, path };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Model names become a CLI argument: letters, digits and ._:/@- only, 1-128 characters (linear check). */
export const MODEL_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,127}$/;
