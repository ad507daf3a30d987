// One remote session: the CLI subprocess(es) behind it and the commands that steer them.
//
// stream adapters keep one CLI alive and write one stream-json line per chat message; a new proxy
// token or model needs a restart, which waits until no turn is in flight (a turn ends at the CLI's
// `result` line) and resumes the CLI's own conversation id. per_turn adapters start one process per
// message, so new values simply apply to the next turn.
import { type ChildProcess, spawn } from 'node:child_process';
import { buildCliEnv, type CliAdapter, type TurnUsage } from './adapters.ts';
import type { SessionChannel } from './channel.ts';
import { LineSplitter } from './lines.ts';
import { errorMessage, type Logger } from './log.ts';
import type { SessionState } from './protocol.ts';
import { passedThroughProxy } from './usage.ts';

const IS_WINDOWS = process.platform === 'win32';

export interface SessionSpec {
  sessionId: string;
  adapter: CliAdapter;
  executable: string;
  projectPath: string;
  model?: string;
  proxyToken: string;
  proxyBaseUrl: string;
  conversationId?: string;
  cliEnv: Record<string, string>;
  stopGraceMs: number;
  /** Called with the token usage of every turn that reported some (agent/usage.ts). */
  onUsage?: (usage: TurnUsage, viaProxy: boolean) => void;
}

export class Session {
  private child: ChildProcess | undefined;
  private conversationId: string | undefined;
  /** The CLI's own statement of where its credential comes from (see agent/usage.ts). */
  private keySource: string | undefined;
  private outstandingTurns = 0;
  private paused = false;
  private pendingInputs: string[] = [];
  private restartReason: string | null = null;
  private restarting = false;
  private stopping = false;
  private exited = false;
  private killTimer: NodeJS.Timeout | undefined;
  private readonly permissionInputs = new Map<string, unknown>();
  private resolveDone!: () => void;
  /** Resolves once the session has exited and its final state was emitted. */
  readonly done = new Promise<void>((resolve) => {
    this.resolveDone = resolve;
  });

  constructor(
    private readonly spec: SessionSpec,
    private readonly channel: SessionChannel,
    private readonly log: Logger,
    private readonly onExit: () => void,
  ) {
    this.conversationId = spec.conversationId;
  }

  /** The current proxy token (rotations replace it). */
  get proxyToken(): string {
    return this.spec.proxyToken;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get state(): SessionState {
    return this.exited ? 'exited' : this.paused ? 'paused' : 'running';
  }

  start(): void {
    this.channel.state('running');
    if (this.spec.adapter.mode === 'stream') {
      this.spawnProcess();
    } else {
      this.channel.note('ready', 'waiting for the first message (one CLI process per turn)');
    }
  }

  input(content: string): void {
    this.assertLive();
    if (this.spec.adapter.mode === 'per_turn') {
      if (this.child || this.paused) this.pendingInputs.push(content);
      else this.spawnTurn(content);
      return;
    }
    // While a restart is pending the old process must not start another turn: hold the message.
    if (this.restartReason || this.restarting || !this.child) this.pendingInputs.push(content);
    else this.writeInput(content);
  }

  pause(): void {
    this.assertLive();
    if (IS_WINDOWS) throw new Error('pause is not supported on Windows (no SIGSTOP)');
    if (this.paused) return;
    this.paused = true;
    this.signal('SIGSTOP');
    this.channel.state('paused');
  }

  resume(): void {
    this.assertLive();
    if (!this.paused) return;
    this.paused = false;
    this.signal('SIGCONT');
    this.channel.state('running');
    if (this.spec.adapter.mode === 'per_turn') this.nextTurn();
    else this.maybeRestart();
  }

  abort(): void {
    this.assertLive();
    this.signal('SIGINT');
  }

  setModel(model: string): void {
    this.assertLive();
    this.spec.model = model;
    this.requestRestart('model changed');
  }

  rotateToken(proxyToken: string): void {
    this.assertLive();
    this.spec.proxyToken = proxyToken;
    this.requestRestart('proxy token rotated');
  }

  permissionResponse(requestId: string, decision: 'allow' | 'deny', message?: string): void {
    this.assertLive();
    if (!this.permissionInputs.has(requestId)) throw new Error(`no pending permission request ${requestId}`);
    if (!this.child?.stdin) throw new Error('the CLI is not running');
    const line = this.spec.adapter.formatPermissionResponse(
      requestId,
      decision,
      this.permissionInputs.get(requestId),
      message,
    );
    this.permissionInputs.delete(requestId);
    if (line) this.child.stdin.write(line);
  }

  /** SIGTERM the process group, SIGKILL after the grace period; resolves when exited. */
  stop(): Promise<void> {
    if (this.exited || this.stopping) return this.done;
    this.stopping = true;
    this.pendingInputs = [];
    if (!this.child) {
      this.finish(null, null);
      return this.done;
    }
    this.terminate();
    return this.done;
  }

  private assertLive(): void {
    if (this.exited || this.stopping) throw new Error('session is stopping or has exited');
  }

  private requestRestart(reason: string): void {
    if (this.spec.adapter.mode === 'per_turn') {
      this.channel.note('applied', `${reason}; takes effect with the next message`);
      return;
    }
    this.restartReason = reason;
    this.maybeRestart();
  }

  private maybeRestart(): void {
    if (!this.restartReason || this.restarting || this.paused || this.stopping || this.outstandingTurns > 0)
      return;
    if (!this.child) return;
    this.restarting = true;
    const resuming = this.conversationId ? ' resuming its conversation' : ' (no conversation yet)';
    this.channel.note('restarting', `restarting the CLI between turns: ${this.restartReason};${resuming}`);
    this.terminate();
  }

  private terminate(): void {
    this.child?.stdin?.end();
    this.signal('SIGTERM');
    // A stopped process only acts on SIGTERM once continued.
    if (this.paused) this.signal('SIGCONT');
    clearTimeout(this.killTimer);
    this.killTimer = setTimeout(() => this.signal('SIGKILL'), this.spec.stopGraceMs);
  }

  private spawnTurn(content: string): void {
    if (!this.spawnProcess()) return;
    this.outstandingTurns = 1;
    this.child?.stdin?.end(this.spec.adapter.formatInput(content));
  }

  private nextTurn(): void {
    const next = this.pendingInputs.shift();
    if (next !== undefined) this.spawnTurn(next);
  }

  private writeInput(content: string): void {
    this.outstandingTurns += 1;
    this.child?.stdin?.write(this.spec.adapter.formatInput(content));
  }

  private spawnProcess(): boolean {
    const { adapter, model } = this.spec;
    const args = this.conversationId
      ? adapter.resumeArgs(this.conversationId, model)
      : adapter.startArgs(model);
    const env = buildCliEnv(
      adapter,
      process.env,
      this.spec.proxyToken,
      this.spec.proxyBaseUrl,
      this.spec.cliEnv,
    );
    let child: ChildProcess;
    try {
      // detached: own process group (setsid), so signals reach the CLI's tool subprocesses too.
      child = spawn(this.spec.executable, args, {
        cwd: this.spec.projectPath,
        env,
        detached: !IS_WINDOWS,
        stdio: ['pipe', 'pipe', 'pipe'],
        windowsHide: true,
      });
    } catch (err) {
      this.failToStart(err);
      return false;
    }
    this.child = child;
    let gone = false;
    const onGone = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (gone) return;
      gone = true;
      this.childGone(child, code, signal);
    };
    child.stdin?.on('error', () => {
      // EPIPE when the CLI exits while we write; the exit handler reports it.
    });
    const out = new LineSplitter((line, truncated) => this.onStdoutLine(line, truncated));
    const err = new LineSplitter((line) => this.channel.output('stderr', line));
    child.stdout?.on('data', (chunk: Buffer) => out.push(chunk));
    child.stdout?.on('end', () => out.end());
    child.stderr?.on('data', (chunk: Buffer) => err.push(chunk));
    child.stderr?.on('end', () => err.end());
    child.on('error', (error) => {
      if (child.pid === undefined) {
        this.child = undefined;
        gone = true;
        this.failToStart(error);
      } else {
        this.log.warn('CLI process error', { session_id: this.spec.sessionId, error: errorMessage(error) });
      }
    });
    // 'close' waits for stdout to drain so the last lines precede the exit note; a grandchild
    // holding the pipes open must not hide the exit for ever, hence the fallback after 'exit'.
    child.on('close', onGone);
    child.on('exit', (code, signal) => setTimeout(() => onGone(code, signal), 2000).unref());
    if (child.pid !== undefined) {
      this.channel.note('started', `CLI started (pid ${child.pid})`, {
        pid: child.pid,
        executable: this.spec.executable,
        resumed: Boolean(this.conversationId),
      });
      this.log.info('CLI started', { session_id: this.spec.sessionId, pid: child.pid, cli_tool: adapter.id });
    }
    return true;
  }

  private onStdoutLine(line: string, truncated: boolean): void {
    let event: Record<string, unknown> | null = null;
    if (!truncated && line.startsWith('{')) {
      try {
        const parsed: unknown = JSON.parse(line);
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
          event = parsed as Record<string, unknown>;
      } catch {
        // Not JSON: forwarded as plain text.
      }
    }
    const info = event ? this.spec.adapter.inspect(event) : {};
    if (info.permissionRequest) {
      this.permissionInputs.set(info.permissionRequest.requestId, info.permissionRequest.input);
      this.channel.output('permission', line);
    } else {
      this.channel.output('stdout', line);
    }
    if (info.conversationId) this.conversationId = info.conversationId;
    if (info.keySource) this.keySource = info.keySource;
    if (info.usage)
      this.spec.onUsage?.(info.usage, passedThroughProxy(this.keySource, this.spec.adapter.keyVar));
    if (info.turnEnded && this.spec.adapter.mode === 'stream') {
      this.outstandingTurns = Math.max(0, this.outstandingTurns - 1);
      this.maybeRestart();
    }
  }

  private childGone(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (child !== this.child) return;
    this.child = undefined;
    clearTimeout(this.killTimer);
    this.permissionInputs.clear();
    if (this.stopping) {
      this.finish(code, signal);
      return;
    }
    if (this.restarting) {
      this.restarting = false;
      this.restartReason = null;
      this.outstandingTurns = 0;
      if (!this.spawnProcess()) return;
      const held = this.pendingInputs;
      this.pendingInputs = [];
      for (const content of held) this.writeInput(content);
      return;
    }
    if (this.spec.adapter.mode === 'per_turn') {
      this.outstandingTurns = 0;
      this.channel.note('turn_finished', `CLI turn process ended (exit ${code ?? signal})`, {
        exit_code: code,
        signal,
      });
      if (!this.paused) this.nextTurn();
      return;
    }
    // The long-lived CLI ended by itself (crash, or it closed on its own).
    this.finish(code, signal);
  }

  private failToStart(err: unknown): void {
    const code = (err as NodeJS.ErrnoException)?.code;
    const hint =
      code === 'ENOENT' ? ` (is "${this.spec.executable}" installed and on PATH, or cli_path set?)` : '';
    this.channel.note('start_failed', `could not start the CLI: ${errorMessage(err)}${hint}`);
    this.log.error('could not start CLI', { session_id: this.spec.sessionId, error: errorMessage(err) });
    this.finish(null, null);
  }

  private finish(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exited) return;
    this.exited = true;
    clearTimeout(this.killTimer);
    this.channel.note('exited', `session ended (exit ${code ?? signal ?? 'n/a'})`, {
      exit_code: code,
      signal,
    });
    this.channel.state('exited', code, signal);
    this.log.info('session ended', { session_id: this.spec.sessionId, exit_code: code, signal });
    this.onExit();
    this.resolveDone();
  }

  private signal(sig: NodeJS.Signals): void {
    const child = this.child;
    if (!child?.pid) return;
    try {
      if (IS_WINDOWS) child.kill(sig);
      else process.kill(-child.pid, sig);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') {
        this.log.warn('could not signal CLI', {
          session_id: this.spec.sessionId,
          signal: sig,
          error: errorMessage(err),
        });
      }
    }
  }
}
