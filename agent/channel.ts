// Numbers and stamps everything one session sends to the server.
import { randomUUID } from 'node:crypto';
import type { AgentEvent, OutputStream, SessionState } from './protocol.ts';

export type EmitEvent = (event: AgentEvent) => void;

export class SessionChannel {
  /** A fresh id per session.start, so a session started again never reuses (run_id, seq). */
  readonly runId = randomUUID();
  private seq = 0;

  constructor(
    readonly sessionId: string,
    private readonly emit: EmitEvent,
  ) {}

  output(stream: OutputStream, data: string): void {
    this.seq += 1;
    this.emit({
      type: 'output',
      session_id: this.sessionId,
      run_id: this.runId,
      seq: this.seq,
      stream,
      data,
      timestamp: new Date().toISOString(),
    });
  }

  /** A lifecycle note from the agent itself (stream `system`), JSON like the CLI's own lines. */
  note(event: string, message: string, extra: Record<string, unknown> = {}): void {
    this.output('system', JSON.stringify({ type: 'agent', event, message, ...extra }));
  }

  state(state: SessionState, exitCode: number | null = null, signal: string | null = null): void {
    this.emit({
      type: 'session_state',
      session_id: this.sessionId,
      state,
      ...(state === 'exited' ? { exit_code: exitCode, signal } : {}),
      timestamp: new Date().toISOString(),
    });
  }
}
