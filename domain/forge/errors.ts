// Errors of the forge layer (domain/forge/types.ts and its implementations). Each carries its HTTP
// status (an API route may surface it) and a stable `code`, so the workflow's error classification can
// map every forge failure exhaustively (a Temporal ApplicationFailure carries the class name as its
// type). Messages never contain secrets: git's stderr tail is kept, but git is never given
// credentials by the local forge, and the GitHub forge must redact its token before throwing.
import { AppError } from '../errors.ts';

export type ForgeErrorCode =
  | 'git_timeout'
  | 'git_failed'
  | 'git_output_too_large'
  | 'not_a_repository'
  | 'invalid_branch_name'
  | 'invalid_path'
  | 'too_many_changed_files'
  | 'pull_request_not_found'
  | 'pull_request_state'
  | 'project_repository'
  // The remote forge's API (GitHub, services/forge/github/): its HTTP refusals and failures.
  | 'forge_permission'
  | 'forge_not_found'
  | 'forge_transient'
  | 'forge_api'
  | 'ci_evidence_insufficient';

export class ForgeError extends AppError {
  constructor(
    readonly code: ForgeErrorCode,
    status: number,
    message: string,
    extra: Record<string, unknown> = {},
  ) {
    super(status, message, extra);
  }
}

/** A git call ran past its timeout; its process group was killed. Transient (retry in phase). */
export class GitTimeoutError extends ForgeError {
  constructor(
    readonly args: readonly string[],
    readonly timeoutMs: number,
  ) {
    super('git_timeout', 504, `git ${args[0] ?? ''} timed out after ${timeoutMs} ms`);
  }
}

/** git exited non-zero where success was required; `stderrTail` is the last 2 KiB of its stderr. */
export class GitCommandError extends ForgeError {
  constructor(
    readonly args: readonly string[],
    readonly exitCode: number | null,
    readonly stderrTail: string,
  ) {
    super(
      'git_failed',
      500,
      `git ${args[0] ?? ''} failed (exit ${exitCode ?? 'signal'}): ${stderrTail.trim().slice(-500)}`,
    );
  }
}

/** git wrote more than the caller's output bound (the process was killed). */
export class GitOutputTooLargeError extends ForgeError {
  constructor(
    readonly args: readonly string[],
    readonly limitBytes: number,
  ) {
    super('git_output_too_large', 500, `git ${args[0] ?? ''} wrote more than ${limitBytes} bytes`);
  }
}

export class NotARepositoryError extends ForgeError {
  constructor(readonly where: string) {
    super('not_a_repository', 400, `Not a Git repository: ${where}`);
  }
}

/** A branch name (usually derived from user input) that is not a safe, valid Git branch name. */
export class InvalidBranchNameError extends ForgeError {
  constructor(reason: string) {
    super('invalid_branch_name', 400, `Invalid branch name: ${reason}`);
  }
}

/** A path outside the directory the forge owns (worktrees), or otherwise unusable. */
export class ForgePathError extends ForgeError {
  constructor(reason: string) {
    super('invalid_path', 400, reason);
  }
}

/** More changed files than one automatic change may hold (spec "Limits": AUTONOMOUS_MAX_CHANGED_FILES). */
export class ChangedFilesLimitError extends ForgeError {
  constructor(
    readonly changedFiles: number,
    readonly limit: number,
  ) {
    super(
      'too_many_changed_files',
      422,
      `The change touches ${changedFiles} files; an automatic change may touch at most ${limit} (AUTONOMOUS_MAX_CHANGED_FILES)`,
      { changed_files: changedFiles, limit },
    );
  }
}

export class PullRequestNotFoundError extends ForgeError {
  constructor(repoKey: string, number: number) {
    super('pull_request_not_found', 404, `Pull request ${repoKey}#${number} not found`);
  }
}

/** The operation needs another pull-request state (e.g. syncing a merged PR). */
export class PullRequestStateError extends ForgeError {
  constructor(message: string) {
    super('pull_request_state', 409, message);
  }
}

/** The project's own repository cannot be imported or read (missing, empty, no default branch). */
export class ProjectRepositoryError extends ForgeError {
  constructor(message: string) {
    super('project_repository', 400, message);
  }
}

/** The remote forge refused the token (401/403): missing scope, revoked token, no access. */
export class ForgePermissionError extends ForgeError {
  constructor(
    message: string,
    readonly httpStatus: number,
  ) {
    super('forge_permission', 403, message, { forge_status: httpStatus });
  }
}

/** The remote forge answered 404 for something the operation needs (repository, PR, issue). */
export class ForgeNotFoundError extends ForgeError {
  constructor(message: string) {
    super('forge_not_found', 404, message);
  }
}

/** 429, 5xx or a network failure talking to the remote forge: retried with backoff. */
export class ForgeTransientError extends ForgeError {
  constructor(
    message: string,
    readonly httpStatus: number | null,
  ) {
    super('forge_transient', 502, message, { forge_status: httpStatus });
  }
}

/** Any other refusal of the remote forge's API (422 validation...), with its own message. */
export class ForgeApiError extends ForgeError {
  constructor(
    message: string,
    readonly httpStatus: number,
  ) {
    super('forge_api', 502, message, { forge_status: httpStatus });
  }
}

/**
 * A failed check's log cannot be read yet (`logs_not_ready`) or at all with this token
 * (`no_permission`): the spec's "insufficient CI evidence" class (wait for diagnosis, then fail with a
 * permission hint).
 */
export class CiEvidenceInsufficientError extends ForgeError {
  constructor(
    readonly reason: 'logs_not_ready' | 'no_permission',
    message: string,
  ) {
    super('ci_evidence_insufficient', 503, message, { reason });
  }
}
