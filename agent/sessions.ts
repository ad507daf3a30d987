// Turns server commands into session actions (PROTOCOL.md "Commands") and answers each one.
import { DEFAULT_CLI_TOOL, getAdapter, isValidCliToolName, resolveExecutable } from './adapters.ts';
import { type EmitEvent, SessionChannel } from './channel.ts';
import type { AgentConfig } from './config.ts';
import { errorMessage, type Logger } from './log.ts';
import type { Command } from './protocol.ts';
import { Session } from './session.ts';
import { decideSystemAccount } from './system-account.ts';
import type { UsageReporter } from './usage.ts';
import { confineProjectPath, MODEL_PATTERN, resolveWorkRoots, type WorkRoots } from './work-roots.ts';

export type ResponsePayload = Record<string, unknown>;

const str = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

export class SessionManager {
  private readonly sessions = new Map<string, Session>();
  private readonly workRoots: WorkRoots;
  private readonly usage: UsageReporter | undefined;
  /** Base folder of per-session CLI files (Codex's CODEX_HOME): `<config dir>/sessions`. */
  private readonly stateDir: string | undefined;

  /** Throws WorkRootsError when the configured work roots are unusable (the agent must not start). */
  constructor(
    private readonly config: AgentConfig,
    private readonly emit: EmitEvent,
    private readonly log: Logger,
    opts: { workRoots?: WorkRoots; usage?: UsageReporter; stateDir?: string } = {},
  ) {
    this.workRoots =
      opts.workRoots ??
      resolveWorkRoots({ work_roots: config.work_roots ?? [], work_dir: config.work_dir }, []);
    this.usage = opts.usage;
    this.stateDir = opts.stateDir;
  }

  activeSessionIds(): string[] {
    return [...this.sessions.keys()];
  }

  /** What a session's terminal shell may see: the session's own sandbox view (agent/session.ts). */
  sandboxView(sessionId: string) {
    return this.sessions.get(sessionId)?.sandboxView;
  }

  /** Runs one command; the result becomes the payload of its `response` event. */
  async handle(cmd: Command): Promise<ResponsePayload> {
    try {
      return await this.dispatch(cmd);
    } catch (err) {
      return { ok: false, error: errorMessage(err) };
    }
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((s) => s.stop()));
  }

  private async dispatch(cmd: Command): Promise<ResponsePayload> {
    const payload = cmd.payload ?? {};
    if (cmd.command_type === 'ping') return { ok: true, pong: true };
    if (cmd.command_type === 'session.start') return this.start(cmd);

    const sessionId = str(cmd.session_id) ?? str(payload.session_id);
    const session = sessionId ? this.sessions.get(sessionId) : undefined;
    if (!session) return { ok: false, error: `unknown session ${sessionId ?? '(none given)'}` };

    switch (cmd.command_type) {
      case 'session.input': {
        if (typeof payload.content !== 'string') throw new Error('payload.content must be a string');
        session.input(payload.content);
        return { ok: true };
      }
      case 'session.pause':
        session.pause();
        return { ok: true, state: session.state };
      case 'session.resume':
        session.resume();
        return { ok: true, state: session.state };
      case 'session.abort':
        session.abort();
        return { ok: true };
      case 'session.stop':
        // Do not await the exit: the response must not wait up to the SIGKILL grace period.
        void session.stop();
        return { ok: true };
      case 'session.set_model': {
        const model = str(payload.model);
        if (!model || !MODEL_PATTERN.test(model))
          throw new Error(
            'payload.model must be 1-128 letters, digits or ._:/@- (starting with a letter or digit)',
          );
        session.setModel(model);
        return { ok: true };
      }
      case 'session.rotate_token': {
        const token = str(payload.proxy_token);
        if (!token) throw new Error('payload.proxy_token must be a non-empty string');
        session.rotateToken(token);
        return { ok: true };
      }
      case 'session.permission_response': {
        const requestId = str(payload.request_id);
        const decision = payload.decision;
        if (!requestId) throw new Error('payload.request_id must be a non-empty string');
        if (decision !== 'allow' && decision !== 'deny')
          throw new Error('payload.decision must be "allow" or "deny"');
        session.permissionResponse(requestId, decision, str(payload.message));
        return { ok: true };
      }
      default:
        return { ok: false, error: `unsupported command_type "${cmd.command_type}"` };
    }
  }

  private start(cmd: Command): ResponsePayload {
    const payload = cmd.payload ?? {};
    const sessionId = str(cmd.session_id) ?? str(payload.session_id);
    if (!sessionId) throw new Error('session.start needs a session_id');
    const running = this.sessions.get(sessionId);
    if (running) return { ok: true, already_running: true, pid: running.pid ?? null };

    // A refused start still produces a visible reason and a final state for the session.
    const refuse = (reason: string): ResponsePayload => {
      const channel = new SessionChannel(sessionId, this.emit);
      channel.note('start_refused', reason);
      channel.state('exited');
      this.log.warn('session.start refused', { session_id: sessionId, reason });
      return { ok: false, error: reason };
    };

    if (this.sessions.size >= this.config.max_sessions) {
      return refuse(`this machine already runs max_sessions (${this.config.max_sessions}) sessions`);
    }
    const confined = confineProjectPath(str(payload.project_path), this.config.work_dir, this.workRoots);
    if (!confined.ok) return refuse(confined.error);
    const projectPath = confined.path;
    const model = str(payload.model);
    if (model !== undefined && !MODEL_PATTERN.test(model))
      return refuse('model must be 1-128 letters, digits or ._:/@- (starting with a letter or digit)');
    const cliTool = str(payload.cli_tool) ?? (this.config.cli_tool || DEFAULT_CLI_TOOL);
    if (!isValidCliToolName(cliTool)) return refuse(`invalid cli_tool "${cliTool}"`);
    const proxyToken = str(payload.proxy_token);
    const proxyBaseUrl = str(payload.proxy_base_url);
    if (!proxyToken || !proxyBaseUrl) return refuse('proxy_token and proxy_base_url are required');
    const adapter = getAdapter(cliTool);
    const executable = resolveExecutable(adapter, this.config);
    if (!executable)
      return refuse(`unknown cli_tool "${cliTool}" and no cli_path configured on this machine`);

    const account = decideSystemAccount(str(payload.system_account));
    if (account.kind === 'refused') return refuse(account.reason);

    const channel = new SessionChannel(sessionId, this.emit);
    if (account.kind === 'unavailable') channel.note('system_account_not_used', account.reason);
    let turns = 0;
    const session: Session = new Session(
      {
        sessionId,
        adapter,
        executable,
        projectPath,
        model,
        onUsage: (usage, viaProxy) => {
          turns += 1;
          void this.usage?.send({
            ...usage,
            session_id: sessionId,
            report_id: `${channel.runId}:${turns}`,
            via_proxy: viaProxy,
          });
        },
        proxyToken,
        proxyBaseUrl,
        conversationId: str(payload.resume_conversation_id),
        cliEnv: this.config.cli_env,
        stopGraceMs: this.config.stop_grace_period * 1000,
        stateDir: this.stateDir,
        // The agent's own folders (config and token, install, other sessions) are never visible.
        ...(account.kind === 'switch' ? { runAs: account.account } : {}),
        sandbox: {
          mode: this.config.sandbox,
          hide: [...this.workRoots.protectedDirs, ...(this.stateDir ? [this.stateDir] : [])],
        },
        turnStallTimeoutMs: this.config.turn_stall_timeout * 1000,
      },
      channel,
      this.log,
      () => this.sessions.delete(sessionId),
    );
    this.sessions.set(sessionId, session);
    session.start();
    return { ok: true, run_id: channel.runId, pid: session.pid ?? null };
  }
}
