// One remote session: the CLI subprocess(es) behind it and the commands that steer them.
//
// stream adapters keep one CLI alive and write one stream-json line per chat message; a new proxy
// token or model needs a restart, which waits until no turn is in flight (a turn ends at the CLI's
// `result` line) and resumes the CLI's own conversation id. per_turn adapters start one process per
// message, so new values simply apply to the next turn.
//
// Turn watchdog: while a turn is in flight (and no permission request waits on the user), every
// stdout line of the CLI counts as progress, except lines its adapter marks as waiting (a retry of a
// failed model call). With no progress for `turnStallTimeoutMs`, the session gets a `turn_stalled`
// note and the turn is ended: a stream CLI is restarted (resuming its conversation), a per-turn
// process is terminated. A turn that the CLI itself ends with an error gets a `turn_error` note.
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, lchownSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildCliEnv, type CliAdapter, type TurnUsage } from './adapters.ts';
import type { SessionChannel } from './channel.ts';
import { LineSplitter } from './lines.ts';
import { errorMessage, type Logger } from './log.ts';
import type { SessionState } from './protocol.ts';
import {
  CommandNotFoundError,
  cliProxyBaseUrl,
  type SandboxedCommand,
  type SandboxMode,
  SandboxUnavailableError,
  sandboxedOrBare,
} from './sandbox.ts';
import type { SystemAccount } from './system-account.ts';
import { passedThroughProxy } from './usage.ts';

const IS_WINDOWS = process.platform === 'win32';
/** Epoch milliseconds with sub-millisecond precision (bench/clis reads them from DEBUG logs). */
const preciseNow = () => performance.timeOrigin + performance.now();

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
  /**
   * Where adapters with per-session files (adapter.prepareSessionDir) get their directory: the agent's
   * `<config dir>/sessions` (never a project, agent/work-roots.ts); the system temp dir if unset.
   */
  stateDir?: string;
  /** No CLI progress for this long during a turn ends the turn (agent config turn_stall_timeout); 0 = off. */
  turnStallTimeoutMs?: number;
  /** Called with the token usage of every turn that reported some (agent/usage.ts). */
  onUsage?: (usage: TurnUsage, viaProxy: boolean) => void;
  /**
   * The sandbox (agent/sandbox.ts): `on` (the default) runs the CLI confined to the project, its own
   * session directory and home, reaching only the proxy; `hide` lists the agent's own directories,
   * masked even where a project contains them. `off`: unconfined, with a warning at every start.
   */
  sandbox?: { mode: SandboxMode; hide: string[] };
  /** Multi-user machines: the OS account the session's processes run as (agent/system-account.ts). */
  runAs?: SystemAccount;
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
  /** The adapter's per-session directory (removed at the end) and the variables naming it. */
  private sessionDir: string | undefined;
  private sessionEnv: Record<string, string> = {};
  private stallTimer: NodeJS.Timeout | undefined;
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
    if (!this.prepareSessionDir()) return;
    if (this.spec.adapter.mode === 'stream') {
      this.spawnProcess();
    } else {
      this.channel.note('ready', 'waiting for the first message (one CLI process per turn)');
    }
  }

  input(content: string): void {
    this.assertLive();
    const received = preciseNow();
    if (this.spec.adapter.mode === 'per_turn') {
      if (this.child || this.paused) this.pendingInputs.push(content);
      else this.spawnTurn(content, received);
      return;
    }
    // While a restart is pending the old process must not start another turn: hold the message.
    if (this.restartReason || this.restarting || !this.child) this.pendingInputs.push(content);
    else this.writeInput(content, received);
  }

  pause(): void {
    this.assertLive();
    if (IS_WINDOWS) throw new Error('pause is not supported on Windows (no SIGSTOP)');
    if (this.paused) return;
    this.paused = true;
    this.watchTurn();
    this.signal('SIGSTOP');
    this.channel.state('paused');
  }

  resume(): void {
    this.assertLive();
    if (!this.paused) return;
    this.paused = false;
    this.signal('SIGCONT');
    this.channel.state('running');
    this.watchTurn();
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
    this.watchTurn();
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

  /**
   * (Re)arms the turn watchdog when a turn is in flight and the CLI owes progress; disarms it
   * otherwise (no turn, paused, a permission request waiting on the user, stopping).
   */
  private watchTurn(): void {
    clearTimeout(this.stallTimer);
    this.stallTimer = undefined;
    const timeout = this.spec.turnStallTimeoutMs ?? 0;
    if (
      timeout <= 0 ||
      this.outstandingTurns === 0 ||
      !this.child ||
      this.paused ||
      this.stopping ||
      this.exited ||
      this.permissionInputs.size > 0
    )
      return;
    this.stallTimer = setTimeout(() => this.turnStalled(timeout), timeout);
    this.stallTimer.unref();
  }

  private turnStalled(timeoutMs: number): void {
    this.stallTimer = undefined;
    if (this.outstandingTurns === 0 || !this.child || this.stopping || this.exited) return;
    const seconds = Math.round(timeoutMs / 100) / 10;
    this.channel.note(
      'turn_stalled',
      `the CLI made no progress for ${seconds} s during a turn; the turn was ended (send the message again)`,
      { timeout_ms: timeoutMs },
    );
    this.log.warn('CLI turn stalled', { session_id: this.spec.sessionId, timeout_ms: timeoutMs });
    if (this.spec.adapter.mode === 'per_turn') {
      this.terminate();
      return;
    }
    this.outstandingTurns = 0;
    this.restartReason ??= 'turn stalled';
    this.maybeRestart();
  }

  private terminate(): void {
    this.child?.stdin?.end();
    this.signal('SIGTERM');
    // A stopped process only acts on SIGTERM once continued.
    if (this.paused) this.signal('SIGCONT');
    clearTimeout(this.killTimer);
    this.killTimer = setTimeout(() => this.signal('SIGKILL'), this.spec.stopGraceMs);
  }

  private spawnTurn(content: string, received?: number): void {
    if (!this.spawnProcess()) return;
    this.outstandingTurns = 1;
    this.child?.stdin?.end(this.spec.adapter.formatInput(content));
    this.fed(received, true);
    this.watchTurn();
  }

  /** DEBUG: when a message reached the session and when the CLI got it (the agent's own overhead). */
  private fed(received: number | undefined, spawned: boolean): void {
    this.log.debug('CLI fed', {
      session_id: this.spec.sessionId,
      spawned,
      ...(received !== undefined ? { received_ms: received } : {}),
      fed_ms: preciseNow(),
    });
  }

  private nextTurn(): void {
    const next = this.pendingInputs.shift();
    if (next !== undefined) this.spawnTurn(next);
  }

  private writeInput(content: string, received?: number): void {
    this.outstandingTurns += 1;
    this.child?.stdin?.write(this.spec.adapter.formatInput(content));
    this.fed(received, false);
    this.watchTurn();
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
      this.cliProxyBaseUrl,
      // The adapter's per-session variables (CODEX_HOME) win over cli_env; the proxy variables win over both.
      { ...this.spec.cliEnv, ...this.sessionEnv },
    );
    let jail: SandboxedCommand;
    try {
      jail = this.jail(args, env);
    } catch (err) {
      this.failToStart(err);
      return false;
    }
    let child: ChildProcess;
    try {
      // detached: own process group (setsid), so signals reach the CLI's tool subprocesses too.
      child = spawn(jail.command, jail.args, {
        cwd: this.spec.projectPath,
        env: jail.env,
        ...(this.spec.runAs ? { uid: this.spec.runAs.uid, gid: this.spec.runAs.gid } : {}),
        detached: !IS_WINDOWS,
        stdio: ['pipe', 'pipe', 'pipe'],
        windowsHide: true,
      });
    } catch (err) {
      void jail.close();
      this.failToStart(err);
      return false;
    }
    this.child = child;
    let gone = false;
    const onGone = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (gone) return;
      gone = true;
      void jail.close();
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
    if (info.turnError) this.channel.note('turn_error', info.turnError);
    if (info.turnEnded && this.spec.adapter.mode === 'stream') {
      this.outstandingTurns = Math.max(0, this.outstandingTurns - 1);
      this.maybeRestart();
    } else if (info.turnEnded) {
      // per_turn: the process exits next; its exit is the end the session acts on.
      this.outstandingTurns = 0;
    }
    if (!info.noProgress) this.watchTurn();
  }

  private childGone(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (child !== this.child) return;
    this.child = undefined;
    clearTimeout(this.killTimer);
    clearTimeout(this.stallTimer);
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
      // Exited by itself (not by abort, stop or the watchdog) with its turn still open: say so.
      if (this.outstandingTurns > 0 && signal === null)
        this.channel.note('turn_error', `the CLI exited (code ${code}) without ending its turn`);
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

  /** Fail closed: anything but an explicit `off` is on. */
  private get sandboxMode(): SandboxMode {
    return this.spec.sandbox?.mode === 'off' ? 'off' : 'on';
  }

  /** The proxy address the CLI is given: the sandbox gate's loopback port when sandboxed. */
  private get cliProxyBaseUrl(): string {
    return cliProxyBaseUrl(this.sandboxMode, this.spec.proxyBaseUrl);
  }

  /** The session's private home inside its directory (the sandbox's HOME). */
  get home(): string | undefined {
    return this.sessionDir && path.join(this.sessionDir, 'home');
  }

  /** What the sandbox of this session's processes (CLI, terminal) sees beyond its working directory. */
  get sandboxView():
    | { mode: SandboxMode; home: string; writable: string[]; hide: string[]; runAs?: SystemAccount }
    | undefined {
    if (!this.sessionDir || !this.home) return undefined;
    return {
      mode: this.sandboxMode,
      home: this.home,
      writable: [this.sessionDir],
      hide: this.spec.sandbox?.hide ?? [],
      ...(this.spec.runAs ? { runAs: this.spec.runAs } : {}),
    };
  }

  /** The CLI's command in the sandbox (or bare, with a warning, when the machine's owner turned it off). */
  private jail(args: string[], env: Record<string, string>): SandboxedCommand {
    const view = this.sandboxView;
    if (!view) throw new Error('the session directory is missing');
    if (view.mode === 'on') env.HOME = view.home;
    try {
      return sandboxedOrBare(
        view.mode,
        {
          command: this.spec.executable,
          args,
          workdir: this.spec.projectPath,
          home: view.home,
          env,
          writable: view.writable,
          hide: view.hide,
          proxyBaseUrl: this.spec.proxyBaseUrl,
          runAs: this.spec.runAs ?? null,
        },
        (message) => {
          this.log.warn(message, { session_id: this.spec.sessionId });
          this.channel.note('sandbox_off', message);
        },
      );
    } catch (err) {
      if (err instanceof CommandNotFoundError)
        throw Object.assign(new Error(err.message), { code: 'ENOENT' });
      if (err instanceof SandboxUnavailableError)
        throw new Error(
          `the sandbox is unavailable on this machine, so the CLI was not started: ${err.message}`,
        );
      throw err;
    }
  }

  /**
   * Creates the session's private directory (0700): its home, and the adapter's per-session files;
   * false (session ended) on failure.
   */
  private prepareSessionDir(): boolean {
    const { adapter, stateDir } = this.spec;
    try {
      const base = stateDir ?? os.tmpdir();
      mkdirSync(base, { recursive: true, mode: 0o700 });
      const safeId = this.spec.sessionId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
      this.sessionDir = mkdtempSync(path.join(base, `${safeId}-`));
      mkdirSync(path.join(this.sessionDir, 'home'), { mode: 0o700 });
      this.sessionEnv = adapter.prepareSessionDir?.(this.sessionDir, this.cliProxyBaseUrl) ?? {};
      // Multi-user: the session's directory and home belong to the account its processes run as, and
      // the account may pass through (not list) the state folder and the agent's folder above it to
      // reach them; config.json stays 0600, other sessions' directories 0700 of their own accounts.
      if (this.spec.runAs) {
        chownTree(this.sessionDir, this.spec.runAs.uid, this.spec.runAs.gid);
        for (const dir of [base, path.dirname(base)]) chmodSync(dir, statSync(dir).mode | 0o111);
      }
      return true;
    } catch (err) {
      this.channel.note('start_failed', `could not prepare the CLI's session files: ${errorMessage(err)}`);
      this.log.error('could not prepare session dir', {
        session_id: this.spec.sessionId,
        error: errorMessage(err),
      });
      this.finish(null, null);
      return false;
    }
  }

  private removeSessionDir(): void {
    if (!this.sessionDir) return;
    try {
      rmSync(this.sessionDir, { recursive: true, force: true });
    } catch (err) {
      this.log.warn('could not remove session dir', {
        session_id: this.spec.sessionId,
        error: errorMessage(err),
      });
    }
    this.sessionDir = undefined;
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
    clearTimeout(this.stallTimer);
    this.channel.note('exited', `session ended (exit ${code ?? signal ?? 'n/a'})`, {
      exit_code: code,
      signal,
    });
    this.removeSessionDir();
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

/** chown -R, without following symlinks (the tree is the agent's own, just written). */
function chownTree(dir: string, uid: number, gid: number): void {
  lchownSync(dir, uid, gid);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) chownTree(p, uid, gid);
    else lchownSync(p, uid, gid);
  }
}
