// The in-memory half of the live terminal relay (spec document 1, overview item 6): the terminals this
// API instance holds, each joining one browser WebSocket (api/terminal-socket.ts) to one pseudo-terminal
// on the session's machine, reached through the agent's terminal channel
// (api/routes/remote/terminal-agent.ts). Nothing here is persisted: keystrokes wait in a bounded queue
// until the agent's held long poll takes them, output goes straight to the socket, and both are gone
// when the terminal closes (terminal history is not persisted).
//
// One hub per AppDeps (a WeakMap, like the other per-app caches): the WebSocket server and the router
// share it. While the hub holds terminals of a session it keeps that session's row in the ownership
// registry fresh, and checks the session is still live (a session that ended closes its terminals).
import { randomUUID } from 'node:crypto';
import { remoteSessionsRepository } from '../db/repositories/remote-sessions.ts';
import { acceptsCommands } from '../domain/remote-session-state.ts';
import type { AppDeps } from '../services/deps.ts';
import {
  RELAY_TTL_MS,
  type TerminalRelayRegistry,
  terminalRelayRegistry,
} from '../services/terminal-relay-registry.ts';

/** Bytes of keystrokes waiting for the agent; past this the browser is typing into a dead channel. */
export const MAX_PENDING_INPUT_BYTES = 1024 * 1024;

export type AgentInput = { data: string } | { resize: { cols: number; rows: number } };

export interface TerminalSink {
  /** Terminal output bytes for the browser. */
  output(bytes: Buffer): void;
  /** The terminal ended (agent exit, session end, refusal); `code`/`reason` become the close frame. */
  closed(code: number, reason: string): void;
}

export class RelayTerminal {
  readonly id = randomUUID();
  private pending: AgentInput[] = [];
  private pendingBytes = 0;
  private waiter: ((input: AgentInput[] | null) => void) | undefined;
  ended = false;
  /** Whether the agent's channel has been seen (tests and logs). */
  agentAttached = false;

  constructor(
    readonly sessionId: string,
    readonly machineId: string,
    private readonly sink: TerminalSink,
    private readonly onEnd: (t: RelayTerminal) => void,
  ) {}

  /** Keystrokes or a resize from the browser; false when the queue is over its bound. */
  push(input: AgentInput): boolean {
    if (this.ended) return false;
    const size = 'data' in input ? input.data.length : 16;
    if (this.pendingBytes + size > MAX_PENDING_INPUT_BYTES) return false;
    this.pending.push(input);
    this.pendingBytes += size;
    this.wake();
    return true;
  }

  /** The agent's long poll: everything pending now, or the next input within `waitMs` (null: ended). */
  take(waitMs: number, signal: AbortSignal): Promise<AgentInput[] | null> {
    this.agentAttached = true;
    if (this.ended) return Promise.resolve(null);
    if (this.pending.length || waitMs <= 0) return Promise.resolve(this.drain());
    // A newer poll replaces a held one (the agent keeps exactly one open).
    this.waiter?.([]);
    return new Promise((resolve) => {
      const timer = setTimeout(() => finish([]), waitMs);
      const finish = (v: AgentInput[] | null) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', abort);
        if (this.waiter === finish) this.waiter = undefined;
        resolve(v);
      };
      const abort = () => finish([]);
      signal.addEventListener('abort', abort, { once: true });
      this.waiter = finish;
    });
  }

  /** Input handed to a poll whose connection went away before the answer was written: back in front. */
  giveBack(input: AgentInput[]): void {
    if (!input.length || this.ended) return;
    this.pending.unshift(...input);
    for (const i of input) this.pendingBytes += 'data' in i ? i.data.length : 16;
  }

  output(bytes: Buffer): void {
    if (!this.ended) this.sink.output(bytes);
  }

  /** Ends the terminal once: the browser socket is closed with `code`, the agent's poll answered. */
  end(code: number, reason: string): void {
    if (this.ended) return;
    this.ended = true;
    this.pending = [];
    this.pendingBytes = 0;
    const w = this.waiter;
    this.waiter = undefined;
    w?.(null);
    this.sink.closed(code, reason);
    this.onEnd(this);
  }

  private drain(): AgentInput[] {
    const out = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    return out;
  }

  private wake(): void {
    const w = this.waiter;
    if (!w) return;
    this.waiter = undefined;
    w(this.drain());
  }
}

export class TerminalRelayHub {
  private readonly terminals = new Map<string, RelayTerminal>();
  readonly registry: TerminalRelayRegistry;
  /** Set when the HTTP server listens (SVC_INSTANCE_URL wins). */
  instanceUrl = '';
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: AppDeps) {
    this.registry = terminalRelayRegistry({ database: deps.database, now: deps.now, logger: deps.logger });
  }

  find(terminalId: string): RelayTerminal | undefined {
    return this.terminals.get(terminalId);
  }

  /** Session ids with at least one terminal on this instance. */
  sessions(): string[] {
    return [...new Set([...this.terminals.values()].map((t) => t.sessionId))];
  }

  open(sessionId: string, machineId: string, sink: TerminalSink): RelayTerminal {
    const t = new RelayTerminal(sessionId, machineId, sink, (ended) => this.forget(ended));
    this.terminals.set(t.id, t);
    this.timer ??= setInterval(() => void this.tick(), Math.floor(RELAY_TTL_MS / 3));
    this.timer.unref();
    return t;
  }

  /** Ends every terminal (server shutdown). */
  closeAll(): void {
    for (const t of [...this.terminals.values()]) t.end(1001, JSON.stringify({ reason: 'server_shutdown' }));
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private forget(t: RelayTerminal): void {
    this.terminals.delete(t.id);
    if (!this.sessions().includes(t.sessionId))
      void this.registry
        .release(t.sessionId)
        .catch((err) => this.deps.logger.warn({ err }, 'terminal relay: release failed'));
    if (!this.terminals.size) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** Keeps ownership rows fresh and closes the terminals of sessions that ended. */
  private async tick(): Promise<void> {
    const ids = this.sessions();
    try {
      await this.registry.refresh(ids, this.instanceUrl);
      const repo = remoteSessionsRepository(this.deps.database);
      for (const id of ids) {
        const s = await repo.find(id);
        if (s && acceptsCommands(s.status)) continue;
        for (const t of [...this.terminals.values()])
          if (t.sessionId === id) t.end(1000, JSON.stringify({ reason: 'session_ended' }));
      }
    } catch (err) {
      this.deps.logger.warn({ err }, 'terminal relay: periodic check failed');
    }
  }
}

const hubs = new WeakMap<AppDeps, TerminalRelayHub>();

export function terminalRelayHub(deps: AppDeps): TerminalRelayHub {
  let hub = hubs.get(deps);
  if (!hub) {
    hub = new TerminalRelayHub(deps);
    hubs.set(deps, hub);
  }
  return hub;
}
