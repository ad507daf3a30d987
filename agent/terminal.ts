// The agent's half of the live terminal relay (PROTOCOL.md "Terminal relay"): on `terminal.open` it
// starts a shell on a pseudo-terminal in the session's project directory and joins it to the API
// instance that holds the browser's WebSocket (`relay_url`), over a dedicated long-poll channel:
//   - one poll always open (`wait_ms` 25 s) that brings keystrokes and resizes back at once;
//   - output sent as soon as the shell prints it, in separate `wait_ms: 0` calls (chunks printed while
//     one call is in flight travel together in the next);
//   - 404/401 from the server, a shell exit, or the session ending closes the terminal.
// The pseudo-terminal comes from util-linux `script(1)` (Node built-ins only, no native module):
//   script -q -e -f -c "stty cols C rows R; exec <shell> -i" /dev/null
// with plain pipes on script's side. Resize: the agent finds the shell's tty (/proc/<script pid>/task/
// <pid>/children, then /proc/<shell pid>/fd/0 -> /dev/pts/N) and runs `stty -F /dev/pts/N cols C rows R`;
// the kernel then sends SIGWINCH to the terminal's foreground process group, as a real terminal would.
// Linux only (util-linux script and /proc); elsewhere terminal.open answers ok:false.
// Nothing of the terminal is written to disk or to the log.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { sleep } from './backoff.ts';
import { errorMessage, type Logger } from './log.ts';
import type { Command } from './protocol.ts';
import {
  type SandboxedCommand,
  type SandboxMode,
  SandboxUnavailableError,
  sandboxedOrBare,
} from './sandbox.ts';
import { postJson } from './transport.ts';
import { confineProjectPath, type WorkRoots } from './work-roots.ts';

const MAX_WAIT_MS = 25_000;
/** Output bytes carried by one call at most. */
const MAX_SEND_BYTES = 1024 * 1024;
/** Output kept while the server is unreachable; older output is dropped past this. */
const MAX_QUEUED_BYTES = 8 * 1024 * 1024;
/** A channel failing for this long closes the terminal. */
const GIVE_UP_MS = 30_000;
const MAX_TERMINALS = 10;
const TERMINAL_ID = /^[A-Za-z0-9-]{1,64}$/;
const INHERITED = ['PATH', 'HOME', 'LANG', 'USER', 'SHELL', 'TMPDIR', 'LC_ALL'];

export interface TerminalHost {
  agentToken: string;
  machineId: string;
  /** The server the agent polls: when it is https, a relay must be too (the token goes with each call). */
  serverUrl?: string;
  workDir: string;
  workRoots: WorkRoots;
  isSessionActive(sessionId: string): boolean;
  /** The sandbox view of the session's processes (agent/session.ts sandboxView); the shell gets the same. */
  sessionSandbox(sessionId: string): SessionSandboxView | undefined;
}

export interface SessionSandboxView {
  mode: SandboxMode;
  home: string;
  writable: string[];
  hide: string[];
  /** Multi-user machines: the session's OS account; the shell runs as it too. */
  runAs?: { uid: number; gid: number };
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

class Terminal {
  private child: ChildProcess | undefined;
  private queue: Buffer[] = [];
  private queuedBytes = 0;
  private sending = false;
  private closed = false;
  private exitReported = false;
  private tty: string | undefined;
  private readonly stop = new AbortController();
  private watch: NodeJS.Timeout | undefined;
  private jail: SandboxedCommand | undefined;

  constructor(
    readonly id: string,
    readonly sessionId: string,
    private readonly url: string,
    private readonly host: TerminalHost,
    private readonly log: Logger,
    private readonly onDone: () => void,
  ) {}

  private get headers() {
    return { authorization: `Bearer ${this.host.agentToken}`, 'x-machine-id': this.host.machineId };
  }

  /**
   * The shell runs in the session's sandbox (agent/sandbox.ts: the project, the session's home, no
   * network, nothing of the agent's): bubblewrap inside script(1), so the pseudo-terminal is the
   * shell's. Throws SandboxUnavailableError when the sandbox cannot be had.
   */
  start(cwd: string, cols: number, rows: number, view: SessionSandboxView): void {
    const env: Record<string, string> = {};
    for (const name of INHERITED) if (process.env[name] !== undefined) env[name] = process.env[name]!;
    env.TERM = 'xterm-256color';
    // bash when no SHELL is set: dash, in the sandbox's pid namespace, cannot give the terminal back to
    // the process group it found at start (outside the namespace) and exits 2 whatever `exit` said.
    const shell = process.env.SHELL || (existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh');
    if (view.mode === 'on') {
      env.HOME = view.home;
      env.USER = 'sandbox';
    }
    this.jail = sandboxedOrBare(
      view.mode,
      {
        command: shell,
        args: ['-i'],
        workdir: cwd,
        home: view.home,
        env,
        writable: view.writable,
        hide: view.hide,
        runAs: view.runAs ?? null,
      },
      (message) => this.log.warn(message, { terminal_id: this.id, session_id: this.sessionId }),
    );
    const argv = [this.jail.command, ...this.jail.args].map(shellQuote).join(' ');
    const inner = `stty cols ${cols} rows ${rows} 2>/dev/null; exec ${argv}`;
    this.child = spawn('script', ['-q', '-e', '-f', '-c', inner, '/dev/null'], {
      cwd,
      env: this.jail.env,
      ...(view.runAs ? { uid: view.runAs.uid, gid: view.runAs.gid } : {}),
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    this.child.stdout!.on('data', (d: Buffer) => this.queueOutput(d));
    this.child.stderr!.on('data', (d: Buffer) => this.queueOutput(d));
    this.child.stdin!.on('error', () => undefined);
    this.child.on('error', (err) => {
      this.log.warn('terminal: could not start script(1)', {
        terminal_id: this.id,
        error: errorMessage(err),
      });
      void this.finish(null, null);
    });
    this.child.on('exit', (code, signal) => void this.finish(code, signal));
    this.watch = setInterval(() => {
      if (!this.host.isSessionActive(this.sessionId)) this.close('session ended');
    }, 1000);
    void this.pollLoop();
  }

  /** Ends the shell (its process group); the exit is reported to the relay. */
  close(why: string): void {
    if (this.closed) return;
    this.closed = true;
    this.log.info('terminal closing', { terminal_id: this.id, session_id: this.sessionId, why });
    const pid = this.child?.pid;
    if (pid && this.child!.exitCode === null && this.child!.signalCode === null) {
      // Like closing a terminal window: the shell runs in a session of its own (script(1) calls
      // setsid), so signalling script's group would not reach it. Killing script closes the pty
      // master; the kernel hangs the terminal up (SIGHUP to the shell and its foreground job), and
      // every other process of the shell's session (background jobs) gets SIGHUP too. Programs that
      // ignore SIGHUP (nohup) outlive it, as they would a closed terminal.
      const session = this.shellSession(pid);
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
      for (const member of session)
        try {
          process.kill(member, 'SIGHUP');
        } catch {}
    } else void this.finish(null, null);
  }

  /** Pids of the shell's session (session id = the shell's pid, script's child), from /proc. */
  private shellSession(scriptPid: number): number[] {
    try {
      const shell = Number(
        readFileSync(`/proc/${scriptPid}/task/${scriptPid}/children`, 'utf8').trim().split(' ')[0],
      );
      if (!Number.isInteger(shell) || shell <= 1) return [];
      const members: number[] = [];
      for (const name of readdirSync('/proc')) {
        const p = Number(name);
        if (!Number.isInteger(p) || p <= 1) continue;
        try {
          const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
          // Fields after the command name "(...)": state ppid pgrp session ...
          const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
          if (Number(fields[3]) === shell) members.push(p);
        } catch {}
      }
      return members;
    } catch {
      return [];
    }
  }

  private queueOutput(d: Buffer): void {
    this.queue.push(d);
    this.queuedBytes += d.length;
    while (this.queuedBytes > MAX_QUEUED_BYTES && this.queue.length > 1)
      this.queuedBytes -= this.queue.shift()!.length;
    void this.sendLoop();
  }

  private async call(body: Record<string, unknown>, waitMs: number) {
    return postJson(this.url, { wait_ms: waitMs, ...body }, this.headers, waitMs + 15_000, this.stop.signal);
  }

  private async sendLoop(): Promise<void> {
    if (this.sending) return;
    this.sending = true;
    let failingSince = 0;
    try {
      while (this.queue.length && !this.stop.signal.aborted) {
        const batch: Buffer[] = [];
        let bytes = 0;
        while (this.queue.length && (batch.length === 0 || bytes + this.queue[0]!.length <= MAX_SEND_BYTES)) {
          const b = this.queue.shift()!;
          batch.push(b);
          bytes += b.length;
        }
        this.queuedBytes -= bytes;
        try {
          const r = await this.call({ output: [Buffer.concat(batch).toString('base64')] }, 0);
          if (r.status === 404 || r.status === 401) return this.close(`relay answered ${r.status}`);
          if (r.status !== 200) throw new Error(`relay answered ${r.status}`);
          failingSince = 0;
        } catch (err) {
          this.queue.unshift(...batch);
          this.queuedBytes += bytes;
          failingSince ||= Date.now();
          if (Date.now() - failingSince > GIVE_UP_MS)
            return this.close(`relay unreachable: ${errorMessage(err)}`);
          await sleep(200, this.stop.signal);
        }
      }
    } finally {
      this.sending = false;
    }
  }

  private async pollLoop(): Promise<void> {
    let failingSince = 0;
    while (!this.closed) {
      try {
        const r = await this.call({ output: [] }, MAX_WAIT_MS);
        if (r.status === 404 || r.status === 401) return this.close(`relay answered ${r.status}`);
        if (r.status !== 200) throw new Error(`relay answered ${r.status}`);
        failingSince = 0;
        const body = r.body as { input?: unknown[]; closed?: boolean };
        for (const item of body.input ?? []) this.apply(item);
        if (body.closed) return this.close('closed by the relay');
      } catch (err) {
        if (this.closed) return;
        failingSince ||= Date.now();
        if (Date.now() - failingSince > GIVE_UP_MS)
          return this.close(`relay unreachable: ${errorMessage(err)}`);
        await sleep(200, this.stop.signal);
      }
    }
  }

  private apply(item: unknown): void {
    if (!item || typeof item !== 'object') return;
    const i = item as { data?: unknown; resize?: { cols?: unknown; rows?: unknown } };
    if (typeof i.data === 'string') this.child?.stdin?.write(Buffer.from(i.data, 'base64'));
    else if (i.resize) {
      const cols = Number(i.resize.cols);
      const rows = Number(i.resize.rows);
      if (
        Number.isInteger(cols) &&
        Number.isInteger(rows) &&
        cols > 0 &&
        rows > 0 &&
        cols <= 1000 &&
        rows <= 1000
      )
        this.resize(cols, rows);
    }
  }

  /** `stty -F` on the shell's tty (see the header). */
  private resize(cols: number, rows: number): void {
    try {
      if (!this.tty) {
        const pid = this.child!.pid!;
        const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ');
        const tty = readlinkSync(`/proc/${kids[0]}/fd/0`);
        if (!tty.startsWith('/dev/pts/')) return;
        this.tty = tty;
      }
      execFile('stty', ['-F', this.tty, 'cols', String(cols), 'rows', String(rows)], (err) => {
        if (err) this.log.debug('terminal resize failed', { terminal_id: this.id, error: errorMessage(err) });
      });
    } catch (err) {
      this.log.debug('terminal resize failed', { terminal_id: this.id, error: errorMessage(err) });
    }
  }

  private async finish(code: number | null, signal: NodeJS.Signals | null): Promise<void> {
    if (this.exitReported) return;
    this.exitReported = true;
    this.closed = true;
    clearInterval(this.watch);
    void this.jail?.close();
    // Last output first, then the exit (bounded: the relay may be gone).
    const deadline = Date.now() + 3000;
    while ((this.sending || this.queue.length) && Date.now() < deadline) {
      void this.sendLoop();
      await sleep(20);
    }
    await this.call({ output: [], exited: { exit_code: code, signal } }, 0).catch(() => undefined);
    this.stop.abort();
    this.onDone();
  }
}

export class TerminalManager {
  private readonly terminals = new Map<string, Terminal>();

  constructor(
    private readonly host: TerminalHost,
    private readonly log: Logger,
  ) {}

  /** `terminal.open`: the answer is the command's response payload. */
  open(cmd: Command): Record<string, unknown> {
    const p = cmd.payload ?? {};
    const sessionId = typeof cmd.session_id === 'string' ? cmd.session_id : '';
    const terminalId = typeof p.terminal_id === 'string' ? p.terminal_id : '';
    const relay = typeof p.relay_url === 'string' ? p.relay_url : '';
    if (process.platform !== 'linux') return { ok: false, error: 'terminals need Linux (util-linux script)' };
    if (!TERMINAL_ID.test(terminalId)) return { ok: false, error: 'payload.terminal_id is invalid' };
    let url: URL;
    try {
      url = new URL(`${relay.replace(/\/+$/, '')}/api/remote/agent/terminals/${terminalId}`);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
    } catch {
      return { ok: false, error: 'payload.relay_url must be an http(s) URL' };
    }
    if (url.protocol === 'http:' && this.host.serverUrl?.toLowerCase().startsWith('https:'))
      return {
        ok: false,
        error:
          'payload.relay_url must be https when the server is (the agent token never travels in clear text): set SVC_INSTANCE_URL to an https address',
      };
    if (!this.host.isSessionActive(sessionId))
      return { ok: false, error: `unknown session ${sessionId || '(none given)'}` };
    if (this.terminals.has(terminalId)) return { ok: true, already_open: true };
    if (this.terminals.size >= MAX_TERMINALS)
      return { ok: false, error: `at most ${MAX_TERMINALS} terminals` };
    const confined = confineProjectPath(
      typeof p.project_path === 'string' ? p.project_path : undefined,
      this.host.workDir,
      this.host.workRoots,
    );
    if (!confined.ok) return { ok: false, error: confined.error };
    const dim = (v: unknown, d: number) =>
      Number.isInteger(v) && (v as number) > 0 && (v as number) <= 1000 ? (v as number) : d;
    const view = this.host.sessionSandbox(sessionId);
    if (!view) return { ok: false, error: `unknown session ${sessionId}` };
    const t = new Terminal(terminalId, sessionId, url.toString(), this.host, this.log, () =>
      this.terminals.delete(terminalId),
    );
    try {
      t.start(confined.path, dim(p.cols, 80), dim(p.rows, 24), view);
    } catch (err) {
      if (!(err instanceof SandboxUnavailableError)) throw err;
      return {
        ok: false,
        error: `the sandbox is unavailable on this machine, so no terminal opens: ${err.message}`,
      };
    }
    this.terminals.set(terminalId, t);
    this.log.info('terminal opened', { terminal_id: terminalId, session_id: sessionId });
    return { ok: true, terminal_id: terminalId };
  }

  closeAll(): void {
    for (const t of this.terminals.values()) t.close('agent stopping');
  }
}
