// Which branch names the forge accepts (pure). Anything derived from user input goes through
// `assertBranchName` before it reaches a git argument list. The check is one linear pass and stricter
// than `git check-ref-format --branch`: only ASCII letters, digits and `._/-`, so no spaces, control
// characters, `~^:?*[\`, `@{` or shell/option tricks; plus git's own rules (no leading `-`, no `..`, no
// component starting with `.` or ending with `.lock`, no `//`, no trailing `/` or `.`, not `@`, not
// `HEAD`). At most 200 characters.
import { InvalidBranchNameError } from './errors.ts';

export const MAX_BRANCH_NAME_LENGTH = 200;

/** Why `name` is refused, or null when it is a valid branch name. */
export function branchNameProblem(name: string): string | null {
  if (typeof name !== 'string' || name.length === 0) return 'empty';
  if (name.length > MAX_BRANCH_NAME_LENGTH) return `longer than ${MAX_BRANCH_NAME_LENGTH} characters`;
  if (name[0] === '-') return 'starts with "-"';
  if (name === '@' || name === 'HEAD') return `"${name}" is reserved`;
  let prev = '';
  let componentStart = true;
  for (let i = 0; i < name.length; i++) {
    const c = name[i]!;
    const ok =
      (c >= 'a' && c <= 'z') ||
      (c >= 'A' && c <= 'Z') ||
      (c >= '0' && c <= '9') ||
      c === '-' ||
      c === '_' ||
      c === '.' ||
      c === '/';
    if (!ok) return `contains a character outside [A-Za-z0-9._/-] at position ${i + 1}`;
    if (c === '.' && prev === '.') return 'contains ".."';
    if (c === '/' && (prev === '/' || componentStart)) return 'has an empty path component';
    if (c === '.' && componentStart) return 'has a path component starting with "."';
    if (c === '/' && name.endsWith('.lock', i) && i >= 5) return 'has a path component ending with ".lock"';
    componentStart = c === '/';
    prev = c;
  }
  if (prev === '/') return 'ends with "/"';
  if (prev === '.') return 'ends with "."';
  if (name.endsWith('.lock')) return 'ends with ".lock"';
  return null;
}

export function assertBranchName(name: string): string {
  const problem = branchNameProblem(name);
  if (problem) throw new InvalidBranchNameError(problem);
  return name;
}

/** The branch of one autonomous workflow: `svc/wf-<workflow id>` (the id validated like a name). */
export function workflowBranch(workflowId: string): string {
  return assertBranchName(`svc/wf-${workflowId}`);
}

/** A full object name (SHA-1 or SHA-256 hex). Anything else is refused before it reaches git. */
export function isObjectId(sha: string): boolean {
  if (typeof sha !== 'string' || (sha.length !== 40 && sha.length !== 64)) return false;
  for (let i = 0; i < sha.length; i++) {
    const c = sha.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}
