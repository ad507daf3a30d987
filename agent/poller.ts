// HTTP polling transport loop (PROTOCOL.md "Polling"):
//  - exactly one long poll open at all times, carrying no events, so commands arrive promptly;
//  - events leave in separate wait_ms=0 requests as soon as they are queued: lines queued in the same
//    turn of the event loop, or while the previous request is in flight, travel together in the next
//    one (batching without a waiting window: a lone line is not held back; bench/remote measured the
//    old 5 ms window as most of the stdout -> SSE latency);
//  - every request carries the heartbeat; a heartbeat-only request goes out when no request has for
//    a heartbeat interval (a long poll held longer than that, or a server that does not hold polls);
//    not one every interval regardless, which with polls renewed every 25 s was a third of an idle
//    agent's requests (bench/remote --agents 1000: ~17 of ~57 requests a second);
//  - failures retry with jittered exponential backoff; events stay queued until a 200 acknowledges them;
//  - a 401 anywhere is fatal (the machine was deleted or its token revoked).
import { Backoff, sleep } from './backoff.ts';
import { errorMessage, type Logger } from './log.ts';
import type { Outbox } from './outbox.ts';
import type { Command, Heartbeat } from './protocol.ts';
import { type AgentTransport, AuthRejectedError, TransportError } from './transport.ts';

const MAX_BATCH = 500;

/** A 4xx other than 401/408/429 means the server will never take this request as it is. */
function isPermanentRejection(err: unknown): boolean {
  const status = err instanceof TransportError ? err.status : undefined;
  return status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429;
}

export interface PollerOptions {
  waitMs: number;
  heartbeatMs: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Extra wait before sending queued events, so that lines printed within it travel together (default 0). */
  batchDelayMs?: number;
}

export class Poller {
  private stopped = false;
  private readonly stopController = new AbortController();
  /** Aborted when the server answers again, to cut short the other loop's retry sleep. */
  private wake = new AbortController();
  private sending = false;
  private heartbeatDue = false;
  private flushTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private connected: boolean | null = null;
  /** Shrinks while the server refuses batches, to isolate the event it cannot take. */
  private batchLimit = MAX_BATCH;
  private pollLoopDone: Promise<void> = Promise.resolve();

  constructor(
    private readonly transport: AgentTransport,
    private readonly outbox: Outbox,
    private readonly opts: PollerOptions,
    private readonly heartbeat: () => Heartbeat,
    private readonly onCommands: (commands: Command[]) => void,
    private readonly onFatal: (err: Error) => void,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.heartbeatTimer = setTimeout(() => {
      this.heartbeatDue = true;
      this.kick(0);
    }, this.opts.heartbeatMs);
    this.pollLoopDone = this.pollLoop();
  }

  /** One request to the server; it carries the heartbeat, so the heartbeat-only one is due later. */
  private request(body: Parameters<AgentTransport['message']>[0]) {
    // refresh() also re-arms a timer that already fired; not once stopped (it would hold the process).
    if (!this.stopped) this.heartbeatTimer?.refresh();
    return this.transport.message(body, this.stopController.signal);
  }

  /** New events were queued in the outbox. */
  notify(): void {
    this.kick(this.opts.batchDelayMs ?? 0);
  }

  /** Waits (bounded) until queued events are acknowledged; used on shutdown. */
  async drain(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    this.notify();
    while (!this.stopped && (this.outbox.size > 0 || this.sending) && Date.now() < deadline) {
      await sleep(20);
    }
  }

  async stop(): Promise<void> {
    if (this.stopped) return this.pollLoopDone;
    this.stopped = true;
    clearTimeout(this.heartbeatTimer);
    clearTimeout(this.flushTimer);
    this.stopController.abort();
    this.wake.abort();
    return this.pollLoopDone;
  }

  private async pollLoop(): Promise<void> {
    const backoff = new Backoff(this.opts.baseDelayMs, this.opts.maxDelayMs);
    while (!this.stopped) {
      const started = Date.now();
      try {
        const res = await this.request({
          wait_ms: this.opts.waitMs,
          heartbeat: this.heartbeat(),
          events: [],
        });
        backoff.reset();
        this.markConnected();
        if (res.commands.length > 0) {
          this.onCommands(res.commands);
        } else if (Date.now() - started < 100 && this.opts.waitMs >= 1000) {
          // A server that does not hold the poll would otherwise make this loop spin.
          await this.sleepOrWake(1000);
        }
      } catch (err) {
        if (err instanceof AuthRejectedError) return this.fatal(err);
        if (this.stopped) return;
        const delay = backoff.next();
        this.markDisconnected(err, delay, 'long poll');
        await this.sleepOrWake(delay);
      }
    }
  }

  private kick(delayMs: number): void {
    if (this.stopped || this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      void this.sendLoop();
    }, delayMs);
  }

  // One sender at a time keeps events in order; it runs until the outbox is empty.
  private async sendLoop(): Promise<void> {
    if (this.sending) return;
    this.sending = true;
    const backoff = new Backoff(this.opts.baseDelayMs, this.opts.maxDelayMs);
    try {
      while (!this.stopped && (this.outbox.size > 0 || this.heartbeatDue)) {
        this.heartbeatDue = false;
        const batch = this.outbox.take(this.batchLimit);
        try {
          const res = await this.request({ wait_ms: 0, heartbeat: this.heartbeat(), events: batch });
          backoff.reset();
          this.batchLimit = MAX_BATCH;
          this.markConnected();
          // A server may hand pending commands to any request, not only to the long poll.
          if (res.commands.length > 0) this.onCommands(res.commands);
        } catch (err) {
          if (isPermanentRejection(err) && batch.length > 0) {
            // Retrying the same batch would block every later event for ever: halve it until the
            // refused event stands alone, then drop that one event.
            if (batch.length === 1) {
              const e = batch[0]!;
              this.log.error('server refused an event; dropping it', {
                error: (err as Error).message,
                event_type: e.type,
                session_id: 'session_id' in e ? e.session_id : undefined,
              });
            } else {
              this.outbox.requeue(batch);
              this.batchLimit = Math.max(1, Math.floor(batch.length / 2));
            }
            continue;
          }
          this.outbox.requeue(batch);
          if (err instanceof AuthRejectedError) return this.fatal(err);
          if (this.stopped) return;
          const delay = backoff.next();
          this.markDisconnected(
            err,
            delay,
            batch.length > 0 ? `sending ${batch.length} event(s)` : 'heartbeat',
          );
          await this.sleepOrWake(delay);
        }
      }
    } finally {
      this.sending = false;
      // Events queued while the last request was in flight must not wait for the next heartbeat.
      if (!this.stopped && this.outbox.size > 0) this.kick(0);
    }
  }

  private sleepOrWake(ms: number): Promise<void> {
    return sleep(ms, this.wake.signal);
  }

  private markConnected(): void {
    if (this.connected === true) return;
    this.log.info(this.connected === null ? 'connected to server (HTTP polling)' : 'server reachable again', {
      pending_events: this.outbox.size,
    });
    this.connected = true;
    const wake = this.wake;
    this.wake = new AbortController();
    wake.abort();
  }

  private markDisconnected(err: unknown, delayMs: number, what: string): void {
    // Warn once per outage; repeat at DEBUG so a long outage does not flood the log.
    const fields = {
      error: errorMessage(err),
      retry_in_ms: Math.round(delayMs),
      pending_events: this.outbox.size,
    };
    if (this.connected !== false)
      this.log.warn(`server unreachable (${what}); retrying with backoff`, fields);
    else this.log.debug(`retry failed (${what})`, fields);
    this.connected = false;
  }

  private fatal(err: Error): void {
    if (this.stopped) return;
    void this.stop();
    this.onFatal(err);
  }
}
