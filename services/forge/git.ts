// The one way the forge runs git: the `git` binary with an explicit argument array (spawn without a
// shell, so no argument is ever interpreted), a timeout after which the whole process group is
// killed, a bound on the output kept, and a clean minimal environment:
//   PATH only from ours; HOME = the forge's own config dir (never the service account's ~/.gitconfig);
//   GIT_CONFIG_NOSYSTEM=1 and GIT_CONFIG_GLOBAL=/dev/null (no system or user config);
//   GIT_TERMINAL_PROMPT=0 and GIT_ASKPASS/SSH_ASKPASS unset (never waits for a password);
//   LC_ALL=C (stable messages); `-c core.hooksPath=/dev/null` (no hooks run, whatever a repository
//   or an agent put in hooks/); no GIT_DIR/GIT_WORK_TREE/GIT_INDEX_FILE leaking in from our env.
// Nothing of the service's own environment (keys, DATABASE_URL...) reaches git or what git runs.
// Orchestrator commits get an explicit identity (ORCHESTRATOR_IDENTITY) through the env option.
//
// Failures are typed (domain/forge/errors.ts): GitTimeoutError, GitCommandError (exit code + stderr
// tail) when `check` is on (the default), NotARepositoryError when git says so, GitOutputTooLarge-
// Error past `maxOutputBytes` (or, with `truncate`, the output is cut there and `truncated` is set).
import { spawn } from 'node:child_process';
import {
  GitCommandError,
  GitOutputTooLargeError,
  GitTimeoutError,
  NotARepositoryError,
} from '../../domain/forge/errors.ts';

export {
  assertBranchName,
  branchNameProblem,
  isObjectId,
  workflowBranch,
} from '../../domain/forge/branch-name.ts';

export interface GitOptions {
  cwd: string;
  timeoutMs?: number;
  /** Extra environment (identity, GIT_DIR for a bare repository...), added to the clean one. */
  env?: Record<string, string>;
  /** Throw GitCommandError on a non-zero exit (default true); false: return the code. */
  check?: boolean;
  /** Bound on stdout kept (default 16 MiB). */
  maxOutputBytes?: number;
  /** Past the bound: cut the output there and kill git, instead of throwing. */
  truncate?: boolean;
  /** Written to git's stdin. */
  input?: string;
  /** The HOME given to git (default: a nonexistent path; the local forge gives its own `.home`). */
  home?: string;
}

export interface GitResult {
  stdout: string;
  stderr: string;
  code: number;
  truncated: boolean;
}

export const DEFAULT_GIT_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_OUTPUT = 16 * 1024 * 1024;
const STDERR_TAIL = 2048;

export const ORCHESTRATOR_IDENTITY = {
  GIT_AUTHOR_NAME: 'svc orchestrator',
  GIT_AUTHOR_EMAIL: 'orchestrator@svc.invalid',
  GIT_COMMITTER_NAME: 'svc orchestrator',
  GIT_COMMITTER_EMAIL: 'orchestrator@svc.invalid',
} as const;

/** HOME of a call that names none: a path that does not exist, so no user config can be found. */
const NO_HOME = '/nonexistent';

/** The clean environment of a git call (exported for tests and for the CI runner's own use). */
export function cleanGitEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    LC_ALL: 'C',
    LANG: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    ...extra,
  };
}

/** Kills a detached child's whole process group (and the child itself if the group is gone). */
export function killGroup(pid: number | undefined, signal: NodeJS.Signals) {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      /* already gone */
    }
  }
}

export function git(args: readonly string[], opts: GitOptions): Promise<GitResult> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS;
  const max = opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  const fullArgs = ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', ...args];
  return new Promise((resolve, reject) => {
    const child = spawn('git', fullArgs, {
      cwd: opts.cwd,
      env: cleanGitEnv(opts.home ?? NO_HOME, opts.env),
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
      shell: false,
    });
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = '';
    let truncated = false;
    let overflow = false;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid, 'SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      if (truncated || overflow) return;
      if (outBytes + chunk.length > max) {
        if (opts.truncate) {
          out.push(chunk.subarray(0, max - outBytes));
          outBytes = max;
          truncated = true;
        } else overflow = true;
        killGroup(child.pid, 'SIGKILL');
        return;
      }
      out.push(chunk);
      outBytes += chunk.length;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err = (err + chunk.toString('utf8')).slice(-STDERR_TAIL);
    });
    child.stdin.on('error', () => undefined);
    if (opts.input !== undefined) child.stdin.end(opts.input);
    else child.stdin.end();
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new GitCommandError(args, null, `cannot run git: ${e.message}`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (timedOut) return reject(new GitTimeoutError(args, timeoutMs));
      if (overflow) return reject(new GitOutputTooLargeError(args, max));
      const stdout = Buffer.concat(out).toString('utf8');
      const exit = truncated ? 0 : (code ?? -1);
      if (exit !== 0 && opts.check !== false) {
        if (/not a git repository/i.test(err)) return reject(new NotARepositoryError(opts.cwd));
        return reject(new GitCommandError(args, code, err));
      }
      resolve({ stdout, stderr: err, code: exit, truncated });
    });
  });
}

/** Splits NUL-terminated output (`-z`) into its fields. */
export const nulFields = (s: string) => s.split('\0').filter((f) => f.length > 0);
