// CI of the local forge: what the repository declares, and running it in a clean worktree.
//
// Declaration, read from a commit (never from a working tree an agent could still edit; the local
// forge reads the base branch's first, see local-forge.ts):
//   1. `.svc/ci`: its first non-empty line is the command (a leading `#` line is refused, so a shell
//      script there is not half-run), split on spaces/tabs into an executable and
//      its arguments (no quoting, no shell: `npm run test:ci`, `./scripts/ci.sh --fast`). An executable
//      with a `/` is a path inside the worktree; a bare name is looked up on PATH. Anything shell-like
//      (pipes, `&&`) belongs in a script the line names.
//   2. else `npm test` when package.json has a `test` script (npm init's placeholder that only fails,
//      `echo "Error: no test specified" && exit 1`, does not count);
//   3. else no CI: a `no_ci` result, never a fake pass.
//
// Running (runCiCommand): the command is spawned without a shell, detached into its own process
// group, with an environment of only PATH, HOME/TMPDIR in a scratch directory, LANG and CI=true:
// none of the service's variables (keys, DATABASE_URL, SVC_*) reach it. The combined output is kept
// as a tail of LOG_TAIL_BYTES. Timeout or abort: SIGTERM to the group, SIGKILL after KILL_GRACE_MS;
// when the command exits, whatever it left behind in its group is killed too. Outcome: exit 0 ->
// passed, non-zero -> failed, timeout or a command that cannot start -> error, abort -> cancelled
// (not a code failure: the merge stage re-runs it).
// Runtime: a Node version the repository declares (.nvmrc, .tool-versions, engines.node) and that is
// installed under $SVC_RUNTIMES_DIR/node/<version>/bin goes first on PATH (services/forge/runtimes.ts);
// otherwise the service's own, with a note in the log.
// Sandbox (issue 25): the command runs in the sandbox of agent/sandbox.ts with no network; when the
// sandbox cannot be had the run is an `error` that says why, unless SVC_SANDBOX=off (a warning in the log).
// Isolation (issue 15 item 5, `agent`): CI runs repository code, so when the autonomous runner's
// isolation decision is `isolated` it runs like the agent CLI (services/autonomous/runner/isolation/
// launcher.ts): as the agent account, with a fixed system PATH (after a declared runtime), write access
// to the CI worktree only, its scratch HOME/TMPDIR owned by the account, every process of the account
// killed afterwards, and the Git metadata compared around it (a change is a CI `error`). Otherwise it
// runs as the service's account.
import { spawn } from 'node:child_process';
import { chownSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import {
  CommandNotFoundError,
  type SandboxedCommand,
  type SandboxMode,
  SandboxUnavailableError,
  sandboxedOrBare,
} from '../../agent/sandbox.ts';
import type { CiStatus } from '../../domain/forge/types.ts';
import { AGENT_PATH } from '../autonomous/runner/isolation/agent-env.ts';
import type { IsolationDecision } from '../autonomous/runner/isolation/decide.ts';
import { gitMetadataRoots } from '../autonomous/runner/isolation/git-metadata.ts';
import { type PreparedRun, prepareRun } from '../autonomous/runner/isolation/launcher.ts';
import { killGroup } from './git.ts';

export const LOG_TAIL_BYTES = 64 * 1024;
export const KILL_GRACE_MS = 2000;
const MAX_DECLARATION_BYTES = 64 * 1024;
const NPM_PLACEHOLDER = 'echo "Error: no test specified" && exit 1';

/**
 * `command`: run it. `invalid`: the repository declares CI but the declaration is unusable: recorded
 * as an `error` run (a check that did not pass), never as "no CI". `none`: nothing declared.
 */
export type CiDeclaration =
  | { kind: 'command'; argv: string[]; source: '.svc/ci' | 'package.json' }
  | { kind: 'invalid'; source: '.svc/ci' | 'package.json'; reason: string }
  | { kind: 'none'; reason: string };

/** The declared CI command, from the files' contents at the commit (null: file absent). */
export function parseCiDeclaration(svcCi: string | null, packageJson: string | null): CiDeclaration {
  if (svcCi !== null) {
    const line = svcCi
      .slice(0, MAX_DECLARATION_BYTES)
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l.length > 0);
    if (!line) return { kind: 'invalid', source: '.svc/ci', reason: '.svc/ci has no command line' };
    if (line.startsWith('#'))
      return {
        kind: 'invalid',
        source: '.svc/ci',
        reason: '.svc/ci must start with the command line (e.g. `sh scripts/ci.sh`), not a comment',
      };
    return { kind: 'command', argv: line.split(/[ \t]+/), source: '.svc/ci' };
  }
  if (packageJson !== null) {
    let pkg: { scripts?: Record<string, unknown> } | null;
    try {
      pkg = JSON.parse(packageJson.slice(0, 1024 * 1024));
    } catch {
      // Fail closed: a repository with a package.json it cannot parse does not get "no CI".
      return { kind: 'invalid', source: 'package.json', reason: 'package.json is not valid JSON' };
    }
    const test = pkg?.scripts?.test;
    if (typeof test === 'string' && test.trim() && test.trim() !== NPM_PLACEHOLDER)
      return { kind: 'command', argv: ['npm', 'test'], source: 'package.json' };
  }
  return { kind: 'none', reason: 'the repository declares no CI (.svc/ci or a package.json test script)' };
}

export interface CiProcessResult {
  status: Exclude<CiStatus, 'queued' | 'running'>;
  exitCode: number | null;
  logTail: string;
}

/** Keeps the last `max` bytes written. */
class Tail {
  private chunks: Buffer[] = [];
  private size = 0;
  constructor(private readonly max: number) {}
  push(b: Buffer) {
    this.chunks.push(b);
    this.size += b.length;
    while (this.size - (this.chunks[0]?.length ?? 0) >= this.max) this.size -= this.chunks.shift()!.length;
  }
  text() {
    const all = Buffer.concat(this.chunks);
    return all.subarray(Math.max(0, all.length - this.max)).toString('utf8');
  }
}

export async function runCiCommand(opts: {
  argv: string[];
  cwd: string;
  scratchDir: string;
  timeoutMs: number;
  signal?: AbortSignal;
  onStart?: () => void;
  /** A repository-declared runtime's bin directory, first on PATH (services/forge/runtimes.ts). */
  pathPrefix?: string | null;
  /** Lines written to the log first, as `[svc]` notes (e.g. which runtime runs and why). */
  notes?: string[];
  /** Run as the agent account (the autonomous runner's isolation decision), see the header. */
  agent?: Extract<IsolationDecision, { kind: 'isolated' }> | null;
  /** The sandbox switch (SVC_SANDBOX); on unless the operator turned it off. */
  sandbox?: SandboxMode;
}): Promise<CiProcessResult> {
  const tail = new Tail(LOG_TAIL_BYTES);
  const note = (s: string) => tail.push(Buffer.from(`\n[svc] ${s}\n`));
  for (const n of opts.notes ?? []) note(n);
  const basePath = opts.agent ? AGENT_PATH : (process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin');
  const [cmd, ...args] = opts.argv;
  let exe = cmd!;
  if (exe.includes('/')) {
    exe = path.resolve(opts.cwd, exe);
    if (!exe.startsWith(opts.cwd + path.sep)) {
      note(`CI command ${cmd} is outside the repository`);
      return { status: 'error', exitCode: null, logTail: tail.text() };
    }
  }
  if (opts.signal?.aborted) {
    note('CI cancelled before it started');
    return { status: 'cancelled', exitCode: null, logTail: tail.text() };
  }
  const home = path.join(opts.scratchDir, 'home');
  const tmp = path.join(opts.scratchDir, 'tmp');
  mkdirSync(home, { recursive: true });
  mkdirSync(tmp, { recursive: true });
  let prepared: PreparedRun | null = null;
  let jail: SandboxedCommand | null = null;
  try {
    if (opts.agent) {
      const { uid, gid } = opts.agent.account;
      chownSync(home, uid, gid);
      chownSync(tmp, uid, gid);
      prepared = await prepareRun({
        decision: opts.agent,
        worktree: opts.cwd,
        home,
        executable: null,
        label: 'ci',
      });
      note(`CI runs as the agent account ${opts.agent.account.name}`);
    }
    const run = prepared;
    // Repository code runs in the sandbox (agent/sandbox.ts): its worktree and scratch writable, the
    // declared runtime and the Git metadata readable, no network at all.
    try {
      jail = sandboxedOrBare(
        opts.sandbox ?? 'on',
        {
          command: exe,
          args,
          workdir: opts.cwd,
          home,
          writable: [tmp],
          readable: [
            ...gitMetadataRoots(opts.cwd),
            ...(opts.pathPrefix ? [path.dirname(opts.pathPrefix)] : []),
          ],
          env: {
            PATH: opts.pathPrefix ? `${opts.pathPrefix}${path.delimiter}${basePath}` : basePath,
            HOME: home,
            TMPDIR: tmp,
            LANG: 'C.UTF-8',
            CI: 'true',
            GIT_CONFIG_NOSYSTEM: '1',
            GIT_CONFIG_GLOBAL: '/dev/null',
            GIT_TERMINAL_PROMPT: '0',
          },
          runAs: run?.uid !== undefined ? { uid: run.uid, gid: run.gid ?? run.uid } : null,
        },
        (message) => note(`WARNING: ${message}`),
      );
    } catch (err) {
      if (err instanceof SandboxUnavailableError)
        note(`CI refused, the sandbox is unavailable: ${err.message}`);
      else if (err instanceof CommandNotFoundError) note('CI command could not start: ENOENT');
      else throw err;
      return { status: 'error', exitCode: null, logTail: tail.text() };
    }
    const cmd = jail;
    const result = await new Promise<CiProcessResult>((resolve) => {
      const child = spawn(cmd.command, cmd.args, {
        ...(run?.uid !== undefined ? { uid: run.uid, gid: run.gid } : {}),
        cwd: opts.cwd,
        env: cmd.env,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
        shell: false,
      });
      let ended: 'timeout' | 'cancelled' | null = null;
      let killTimer: NodeJS.Timeout | undefined;
      const stop = (why: 'timeout' | 'cancelled') => {
        if (ended) return;
        ended = why;
        killGroup(child.pid, 'SIGTERM');
        killTimer = setTimeout(() => killGroup(child.pid, 'SIGKILL'), KILL_GRACE_MS);
      };
      const timer = setTimeout(() => stop('timeout'), opts.timeoutMs);
      const onAbort = () => stop('cancelled');
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      child.stdout.on('data', (b: Buffer) => tail.push(b));
      child.stderr.on('data', (b: Buffer) => tail.push(b));
      let settled = false;
      const finish = (r: CiProcessResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (killTimer) clearTimeout(killTimer);
        opts.signal?.removeEventListener('abort', onAbort);
        resolve(r);
      };
      child.on('spawn', () => opts.onStart?.());
      child.on('error', (e) => {
        note(`CI command could not start: ${(e as NodeJS.ErrnoException).code ?? e.message}`);
        finish({ status: 'error', exitCode: null, logTail: tail.text() });
      });
      child.on('exit', (code, sig) => {
        // Leftovers of the command (background jobs in its group) do not outlive it.
        killGroup(child.pid, 'SIGKILL');
        // Let the pipes drain (they close once the group is gone), but never wait on them for long.
        const done = () => {
          if (ended === 'timeout') {
            note(`CI timed out after ${Math.round(opts.timeoutMs / 1000)} s; its process group was killed`);
            finish({ status: 'error', exitCode: null, logTail: tail.text() });
          } else if (ended === 'cancelled') {
            note('CI cancelled; its process group was killed');
            finish({ status: 'cancelled', exitCode: null, logTail: tail.text() });
          } else if (code === 0) finish({ status: 'passed', exitCode: 0, logTail: tail.text() });
          else {
            if (sig) note(`CI command killed by ${sig}`);
            finish({ status: 'failed', exitCode: code, logTail: tail.text() });
          }
        };
        const guard = setTimeout(done, 500);
        child.on('close', () => {
          clearTimeout(guard);
          done();
        });
      });
    });
    if (!run) return result;
    prepared = null;
    const { violation } = await run.finish();
    if (!violation) return result;
    note(violation.message);
    return { status: 'error', exitCode: null, logTail: tail.text() };
  } finally {
    await jail?.close().catch(() => undefined);
    await prepared?.finish().catch(() => undefined);
    rmSync(opts.scratchDir, { recursive: true, force: true });
  }
}
