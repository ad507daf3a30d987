// Git metadata integrity (spec document 2, "Limits", execution isolation; "Errors" 4): the Git
// metadata state is recorded before an agent run and compared after it; any change fails closed with
// process exit code 68 and the marker `SVC_REPO_INTEGRITY_VIOLATION`, and needs manual inspection.
// This file is the pure half: the entry shape, the comparison and the error. The snapshot itself
// (a filesystem walk) is services/forge/integrity.ts.
//
// The marker and exit code are the autonomous limits' (domain/autonomous/limits.ts, also behind
// INTEGRITY_MARKER / INTEGRITY_EXIT_CODE of domain/autonomous/errors.ts): one definition.
import { LIMITS } from '../autonomous/limits.ts';
import { AppError } from '../errors.ts';

export const REPO_INTEGRITY_MARKER: string = LIMITS.integrityMarker;
export const REPO_INTEGRITY_EXIT_CODE: number = LIMITS.integrityExitCode;

export type EntryType = 'file' | 'dir' | 'symlink' | 'other';

/** One path under the Git directory (`acl`: read by the agent launcher, services/autonomous/runner/isolation). */
export interface IntegrityEntry {
  /** Relative to the snapshotted directory, `/`-separated. */
  path: string;
  type: EntryType;
  ino: number;
  /** Full st_mode (type and permission bits). */
  mode: number;
  uid: number;
  gid: number;
  /** SHA-256 of the content (files), or the link target (symlinks); null for directories. */
  digest: string | null;
  /** The extended POSIX ACL (entries joined by `,`); null: base entries only; absent: not read. */
  acl?: string | null;
}

export type IntegritySnapshot = Map<string, IntegrityEntry>;

export interface IntegrityViolation {
  path: string;
  change: 'added' | 'removed' | 'changed';
  /** For `changed`: which of type, ino, mode, uid, gid, digest, acl differ. */
  fields: (keyof Omit<IntegrityEntry, 'path'>)[];
}

const FIELDS = ['type', 'ino', 'mode', 'uid', 'gid', 'digest', 'acl'] as const;

/** Every difference between two snapshots, in path order. Empty: untouched. */
export function compareSnapshots(before: IntegritySnapshot, after: IntegritySnapshot): IntegrityViolation[] {
  const out: IntegrityViolation[] = [];
  for (const [p, a] of before) {
    const b = after.get(p);
    if (!b) {
      out.push({ path: p, change: 'removed', fields: [] });
      continue;
    }
    const fields = FIELDS.filter((f) => a[f] !== b[f]);
    if (fields.length) out.push({ path: p, change: 'changed', fields: [...fields] });
  }
  for (const p of after.keys()) if (!before.has(p)) out.push({ path: p, change: 'added', fields: [] });
  return out.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
}

/** The fail-closed outcome of a changed Git directory: never retried, never pushed. */
export class RepositoryIntegrityViolationError extends AppError {
  readonly marker = REPO_INTEGRITY_MARKER;
  readonly exitCode = REPO_INTEGRITY_EXIT_CODE;
  constructor(readonly violations: IntegrityViolation[]) {
    const shown = violations
      .slice(0, 10)
      .map((v) => `${v.change} ${v.path}${v.fields.length ? ` (${v.fields.join(', ')})` : ''}`)
      .join('; ');
    super(
      500,
      `${REPO_INTEGRITY_MARKER}: Git metadata changed during the agent run (${violations.length} change${violations.length === 1 ? '' : 's'}: ${shown}${violations.length > 10 ? '; ...' : ''}); manual inspection required`,
      { marker: REPO_INTEGRITY_MARKER, exit_code: REPO_INTEGRITY_EXIT_CODE },
    );
  }
}

/** Throws RepositoryIntegrityViolationError when the snapshots differ. */
export function assertUnchanged(before: IntegritySnapshot, after: IntegritySnapshot): void {
  const violations = compareSnapshots(before, after);
  if (violations.length) throw new RepositoryIntegrityViolationError(violations);
}
