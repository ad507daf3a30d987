// Shape rules for what a remote session hands to the agent's command line and working directory. The
// agent enforces the real confinement (realpath inside its work roots, agent/work-roots.ts); the server
// refuses obviously unsafe shapes early so they never reach a machine. Both checks are linear.

export const PROJECT_PATH_RULE =
  'must be an absolute path (/..., ~/..., or C:\\...) of at most 500 characters, without NUL or ".." segments';

/** Model names become a CLI argument: letters, digits and ._:/@-, 1-128 characters, no leading dash. */
export const MODEL_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,127}$/;
export const MODEL_RULE = 'must be 1-128 letters, digits or ._:/@- and start with a letter or digit';

const WINDOWS_DRIVE = /^[A-Za-z]:[\\/]/;

export function isSafeProjectPath(path: string): boolean {
  if (path.length === 0 || path.length > 500 || path.includes('\0')) return false;
  const absolute = path.startsWith('/') || path === '~' || path.startsWith('~/') || WINDOWS_DRIVE.test(path);
  if (!absolute) return false;
  return !path.split(/[\\/]/).includes('..');
}
