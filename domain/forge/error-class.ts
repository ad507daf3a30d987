// Which autonomous error class (domain/autonomous/errors.ts, spec "Errors" 4) a forge failure is, so
// the workflow's activities report forge/git/CI failures as structured errors and never by reading
// message text. Exhaustive over ForgeErrorCode: a new code cannot fall through.
// Call it inside the activity: once an error crosses into the workflow it is an ApplicationFailure
// (its type is the class name) and `instanceof` no longer holds.
//   git_timeout, git_failed      transient Git error: short retries in the phase, fail at the limit
//   repository integrity         fail closed (exit 68, SVC_REPO_INTEGRITY_VIOLATION)
//   forge_transient              remote forge 429/5xx: transient API error (exponential backoff);
//                                no HTTP answer at all: transient network error
//   ci_evidence_insufficient     a failed check's log not ready / not readable: wait for diagnosis
//   forge_permission, forge_not_found, forge_api   fail visibly with the forge's (redacted) message
//   everything else              not an error class of the run: the step fails visibly with the
//                                forge's own message (bad input, missing PR, a state the caller must
//                                handle), or, for too_many_changed_files, the change is refused with a
//                                milestone (spec "Limits": 60 changed files)
import type { AutonomousError } from '../autonomous/errors.ts';
import { assertExhaustive } from '../autonomous/states.ts';
import {
  CiEvidenceInsufficientError,
  ForgeError,
  type ForgeErrorCode,
  ForgeTransientError,
} from './errors.ts';
import { RepositoryIntegrityViolationError } from './integrity.ts';

export type ForgeFailure =
  | { kind: 'class'; error: AutonomousError }
  | { kind: 'changed_files_limit'; message: string }
  | { kind: 'visible'; code: ForgeErrorCode; message: string };

function byCode(code: ForgeErrorCode, message: string, err: ForgeError): ForgeFailure {
  switch (code) {
    case 'forge_transient': {
      const status = err instanceof ForgeTransientError ? err.httpStatus : null;
      return status === null
        ? { kind: 'class', error: { class: 'transient_network', source: 'network' } }
        : { kind: 'class', error: { class: 'transient_api', httpStatus: status } };
    }
    case 'ci_evidence_insufficient':
      return {
        kind: 'class',
        error: {
          class: 'ci_evidence_insufficient',
          reason: err instanceof CiEvidenceInsufficientError ? err.reason : 'logs_not_ready',
        },
      };
    case 'forge_permission':
    case 'forge_not_found':
    case 'forge_api':
      return { kind: 'visible', code, message };
    case 'git_timeout':
    case 'git_failed':
      return { kind: 'class', error: { class: 'transient_network', source: 'git' } };
    case 'too_many_changed_files':
      return { kind: 'changed_files_limit', message };
    case 'git_output_too_large':
    case 'not_a_repository':
    case 'invalid_branch_name':
    case 'invalid_path':
    case 'pull_request_not_found':
    case 'pull_request_state':
    case 'project_repository':
      return { kind: 'visible', code, message };
    default:
      return assertExhaustive(code);
  }
}

/** The forge failure's handling, or null when `err` is not a forge error (classify it elsewhere). */
export function classifyForgeError(err: unknown): ForgeFailure | null {
  if (err instanceof RepositoryIntegrityViolationError)
    return { kind: 'class', error: { class: 'repo_integrity_violation' } };
  if (err instanceof ForgeError) return byCode(err.code, err.message, err);
  return null;
}
