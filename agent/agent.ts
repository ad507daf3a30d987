// Wires configuration, transport, poller and sessions into the running agent.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LoadedConfig } from './config.ts';
import { errorMessage, type Logger } from './log.ts';
import { Outbox } from './outbox.ts';
import { Poller } from './poller.ts';
import { type AgentEvent, type Command, MAX_WAIT_MS } from './protocol.ts';
import { SessionManager } from './sessions.ts';
import { TerminalManager } from './terminal.ts';
import { AgentTransport } from './transport.ts';
import { UsageReporter } from './usage.ts';
import { AGENT_VERSION } from './version.ts';
import { resolveWorkRoots } from './work-roots.ts';

/** Where the agent's files are installed (main.js sits beside this module). */
const INSTALL_DIR = dirname(fileURLToPath(import.meta.url));

export const EXIT_AUTH_REJECTED = 3;

export class Agent {
  private readonly outbox = new Outbox();
  private readonly sessions: SessionManager;
  /** Live terminal relay pseudo-terminals (agent/terminal.ts). */
  private readonly terminals: TerminalManager;
  private readonly transport: AgentTransport;
  private readonly poller: Poller;
  /** Command ids already handled, in case a command is delivered twice. */
  private readonly seen = new Set<string>();
  private stopping = false;
  private resolveExit!: (code: number) => void;
  private readonly exited = new Promise<number>((resolve) => {
    this.resolveExit = resolve;
  });

  constructor(
    private readonly loaded: LoadedConfig,
    private readonly log: Logger,
  ) {
    const { config } = loaded;
    if (!config.agent_token) throw new Error('agent is not registered (no agent_token)');
    this.transport = new AgentTransport(config.server_url, config.agent_token, config.machine_id);
    // The config folder (agent token) and the install folder are never a project (agent/work-roots.ts).
    const workRoots = resolveWorkRoots(config, [dirname(loaded.store.path), INSTALL_DIR]);
    this.sessions = new SessionManager(config, (event) => this.send(event), log, {
      workRoots,
      usage: new UsageReporter(
        config.server_url,
        { agentToken: config.agent_token, machineId: config.machine_id },
        log,
      ),
      // Per-session CLI files (Codex's CODEX_HOME) live beside the config, never in a project.
      stateDir: join(dirname(loaded.store.path), 'sessions'),
    });
    this.terminals = new TerminalManager(
      {
        agentToken: config.agent_token,
        machineId: config.machine_id,
        serverUrl: config.server_url,
        workDir: config.work_dir,
        workRoots,
        isSessionActive: (id) => this.sessions.activeSessionIds().includes(id),
        sessionSandbox: (id) => this.sessions.sandboxView(id),
      },
      log,
    );
    this.poller = new Poller(
      this.transport,
      this.outbox,
      {
        waitMs: Math.min(config.long_poll_wait_ms, MAX_WAIT_MS),
        heartbeatMs: config.heartbeat_interval * 1000,
        baseDelayMs: config.reconnect_base_delay * 1000,
        maxDelayMs: config.reconnect_max_delay * 1000,
      },
      () => ({ active_sessions: this.sessions.activeSessionIds(), agent_version: AGENT_VERSION }),
      (commands) => this.onCommands(commands),
      (err) => void this.onFatal(err),
      log,
    );
  }

  /** Runs until stop() or a fatal error; resolves with the process exit code. */
  async run(): Promise<number> {
    const { config } = this.loaded;
    this.log.info('agent starting', {
      agent_version: AGENT_VERSION,
      server_url: config.server_url,
      machine_id: config.machine_id,
      max_sessions: config.max_sessions,
    });
    const probe = await this.transport.probeWebSocket();
    this.log.info(
      probe.upgraded
        ? 'server accepted a WebSocket upgrade, but no frame format is agreed yet; using HTTP polling'
        : 'WebSocket transport unavailable; using HTTP polling',
      { detail: probe.detail },
    );
    if (!this.stopping) this.poller.start();
    return this.exited;
  }

  /** Graceful shutdown: stop the CLIs, report their final states, then stop polling. */
  async stop(reason: string): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.log.info('agent stopping', { reason });
    this.terminals.closeAll();
    await this.sessions.stopAll();
    await this.poller.drain(3000);
    await this.poller.stop();
    this.resolveExit(0);
  }

  private send(event: AgentEvent): void {
    this.outbox.push(event);
    this.poller.notify();
  }

  private onCommands(commands: Command[]): void {
    for (const cmd of commands) {
      if (!cmd || typeof cmd.command_id !== 'string' || typeof cmd.command_type !== 'string') {
        this.log.warn('ignoring malformed command', { command: JSON.stringify(cmd)?.slice(0, 200) });
        continue;
      }
      if (this.seen.has(cmd.command_id)) continue;
      this.remember(cmd.command_id);
      this.log.debug('command', {
        command_id: cmd.command_id,
        command_type: cmd.command_type,
        session_id: cmd.session_id,
      });
      if (cmd.command_type === 'terminal.open') {
        this.send({ type: 'response', command_id: cmd.command_id, payload: this.terminals.open(cmd) });
        continue;
      }
      void this.sessions.handle(cmd).then((payload) => {
        this.send({ type: 'response', command_id: cmd.command_id, payload });
      });
    }
  }

  private remember(commandId: string): void {
    this.seen.add(commandId);
    if (this.seen.size > 2000) {
      const oldest = this.seen.values().next().value;
      if (oldest !== undefined) this.seen.delete(oldest);
    }
  }

  private async onFatal(err: Error): Promise<void> {
    this.log.error(
      'the server rejected this agent token (machine deleted or token revoked); stopping. ' +
        'Re-register the machine with a new registration token.',
      { error: errorMessage(err) },
    );
    this.stopping = true;
    await this.sessions.stopAll();
    this.resolveExit(EXIT_AUTH_REJECTED);
  }
}
