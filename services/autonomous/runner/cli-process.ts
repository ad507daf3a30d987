// One CLI process of the autonomous runner, from spawn to the death of its whole process group.
//
// - Spawned detached (its own process group, setsid), so every signal reaches the tools it starts.
// - Input: one prompt. Stream adapters get one stream-json user line and keep stdin open until the
//   CLI's `result` line (tool-permission requests are answered `allow`: the run is unattended and the
//   worktree is its sandbox); per-turn adapters get the prompt as their whole stdin.
// - Control, every `pollMs`: the workflow's desired run state from the database (`control()`):
//   `paused` -> SIGSTOP to the group (frozen, whatever worker runs this), back to running -> SIGCONT,
//   `cancelled` -> stop. The activity's cancellation signal also stops. `timeoutMs` counts running
//   time only (a frozen process does not time out), and stops the run when it is spent.
// - Stop: SIGTERM to the group (SIGCONT first when frozen, a stopped process acts on nothing), SIGKILL
//   after `graceMs`. When the CLI itself exits, the rest of its group is SIGKILLed: no process of the
//   run survives it (spec "Limits": leftover agent processes are killed after every run).
// - Output: stdout lines are parsed as JSON and handed to `onLine` (with the adapter's reading of
//   them); stderr is kept as a short tail for the error envelope, never logged.
import { type ChildProcess, spawn } from 'node:child_process';
import type { CliAdapter, LineInfo } from '../../../agent/adapters.ts';
import { LineSplitter } from '../../../agent/lines.ts';

export type DesiredState = 'running' | 'paused' | 'cancelled';

export interface CliProcessOptions {
  adapter: CliAdapter;
  executable: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Run as this account (isolation/launcher.ts); the service's own otherwise. */
  uid?: number;
  gid?: number;
  /** Called with the pid right after spawn (isolation: the task cgroup is joined here). */
  onSpawn?(pid: number): void;
  prompt: string;
  timeoutMs: number;
  graceMs: number;
  pollMs: number;
  heartbeatMs: number;
  /** The workflow's desired state; a failed read keeps the current state. */
  control(): Promise<DesiredState>;
  signal?: AbortSignal;
  onLine(event: Record<string, unknown>, info: LineInfo): void;
  onState(
    state: 'started' | 'paused' | 'resumed' | 'stopping',
    detail: { pid?: number; reason?: string },
  ): void;
  heartbeat(detail: ProcessProgress): void;
}

export interface ProcessProgress {
  pid: number | null;
  state: 'running' | 'paused' | 'stopping';
  run_ms: number;
  lines: number;
}

export interface ProcessEnd {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** Why the runner stopped it, if it did. */
  stoppedFor: 'timeout' | 'cancelled' | null;
  /** The process could not be started (ENOENT, EACCES...). */
  spawnError?: string;
  /** The CLI printed its end-of-turn line. */
  turnEnded: boolean;
  stderrTail: string;
  pid: number | null;
}

const STDERR_TAIL = 2000;

export function runCliProcess(opts: CliProcessOptions): Promise<ProcessEnd> {
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      child = spawn(opts.executable, opts.args, {
        cwd: opts.cwd,
        env: opts.env,
        ...(opts.uid !== undefined ? { uid: opts.uid } : {}),
        ...(opts.gid !== undefined ? { gid: opts.gid } : {}),
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
    } catch (err) {
      resolve(failedSpawn(err));
      return;
    }
    const pid = child.pid ?? null;
    if (pid !== null) opts.onSpawn?.(pid);
    let frozen = false;
    let stoppedFor: ProcessEnd['stoppedFor'] = null;
    let turnEnded = false;
    let lines = 0;
    let stderrTail = '';
    let runMs = 0;
    let lastTick = Date.now();
    let killTimer: NodeJS.Timeout | undefined;
    let finished = false;
    let polling = false;

    const group = (sig: NodeJS.Signals) => {
      if (pid === null) return;
      try {
        process.kill(-pid, sig);
      } catch {
        // ESRCH: the group is already gone.
      }
    };

    const stop = (why: 'timeout' | 'cancelled') => {
      if (stoppedFor) return;
      stoppedFor = why;
      opts.onState('stopping', { pid: pid ?? undefined, reason: why });
      child.stdin?.end();
      group('SIGTERM');
      if (frozen) {
        group('SIGCONT');
        frozen = false;
      }
      killTimer = setTimeout(() => group('SIGKILL'), opts.graceMs);
    };

    const account = () => {
      const now = Date.now();
      if (!frozen) runMs += now - lastTick;
      lastTick = now;
    };

    const progress = (): ProcessProgress => ({
      pid,
      state: stoppedFor ? 'stopping' : frozen ? 'paused' : 'running',
      run_ms: runMs,
      lines,
    });

    const poll = setInterval(() => {
      account();
      if (!stoppedFor && runMs >= opts.timeoutMs) stop('timeout');
      if (polling || stoppedFor) return;
      polling = true;
      opts
        .control()
        .then((desired) => {
          if (stoppedFor || finished) return;
          if (desired === 'cancelled') stop('cancelled');
          else if (desired === 'paused' && !frozen) {
            account();
            group('SIGSTOP');
            frozen = true;
            opts.onState('paused', { pid: pid ?? undefined });
          } else if (desired === 'running' && frozen) {
            account();
            group('SIGCONT');
            frozen = false;
            opts.onState('resumed', { pid: pid ?? undefined });
          }
        })
        .catch(() => undefined)
        .finally(() => {
          polling = false;
        });
    }, opts.pollMs);
    const beat = setInterval(() => {
      account();
      opts.heartbeat(progress());
    }, opts.heartbeatMs);

    const onAbort = () => stop('cancelled');
    if (opts.signal?.aborted) queueMicrotask(onAbort);
    else opts.signal?.addEventListener('abort', onAbort, { once: true });

    const end = (exitCode: number | null, signal: NodeJS.Signals | null, spawnError?: string) => {
      if (finished) return;
      finished = true;
      clearInterval(poll);
      clearInterval(beat);
      clearTimeout(killTimer);
      opts.signal?.removeEventListener('abort', onAbort);
      group('SIGKILL');
      resolve({
        exitCode,
        signal,
        stoppedFor,
        turnEnded,
        stderrTail,
        pid,
        ...(spawnError ? { spawnError } : {}),
      });
    };

    child.stdin?.on('error', () => undefined);
    const out = new LineSplitter((line, truncated) => {
      lines += 1;
      if (truncated || !line.startsWith('{')) return;
      let event: Record<string, unknown>;
      try {
        const parsed: unknown = JSON.parse(line);
        if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return;
        event = parsed as Record<string, unknown>;
      } catch {
        return;
      }
      const info = opts.adapter.inspect(event);
      if (info.permissionRequest && opts.adapter.mode === 'stream') {
        const answer = opts.adapter.formatPermissionResponse(
          info.permissionRequest.requestId,
          'allow',
          info.permissionRequest.input,
        );
        if (answer) child.stdin?.write(answer);
      }
      if (info.turnEnded) {
        turnEnded = true;
        // One prompt per run: closing stdin lets a stream CLI finish and exit.
        if (opts.adapter.mode === 'stream') child.stdin?.end();
      }
      opts.onLine(event, info);
    });
    const err = new LineSplitter((line) => {
      stderrTail = (stderrTail + line + '\n').slice(-STDERR_TAIL);
    });
    child.stdout?.on('data', (chunk: Buffer) => out.push(chunk));
    child.stdout?.on('end', () => out.end());
    child.stderr?.on('data', (chunk: Buffer) => err.push(chunk));
    child.stderr?.on('end', () => err.end());
    child.on('error', (error) => {
      if (child.pid === undefined) end(null, null, (error as Error).message.slice(0, 300));
    });
    // 'close' waits for stdout to drain; a grandchild holding the pipes open cannot hide the exit:
    // the group is killed at 'exit', and 'close' follows.
    child.on('exit', (code, signal) => {
      group('SIGKILL');
      setTimeout(() => end(code, signal), 2000).unref();
    });
    child.on('close', (code, signal) => end(code, signal));

    if (pid !== null) {
      opts.onState('started', { pid });
      if (opts.adapter.mode === 'stream') child.stdin?.write(opts.adapter.formatInput(opts.prompt));
      else child.stdin?.end(opts.adapter.formatInput(opts.prompt));
    }
  });
}

function failedSpawn(err: unknown): ProcessEnd {
  return {
    exitCode: null,
    signal: null,
    stoppedFor: null,
    spawnError: (err as Error)?.message?.slice(0, 300) ?? 'spawn failed',
    turnEnded: false,
    stderrTail: '',
    pid: null,
  };
}
