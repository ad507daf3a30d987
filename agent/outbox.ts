// Events waiting to be acknowledged by the server (a 200 to the request that carried them).
// A failed batch goes back to the front, so outputs keep their order across retries.
import type { AgentEvent } from './protocol.ts';

export class Outbox {
  private queue: AgentEvent[] = [];
  dropped = 0;

  constructor(
    /** Bound for a long outage; the oldest outputs go first, responses and states are kept. */
    private readonly maxEvents = 20000,
  ) {}

  get size(): number {
    return this.queue.length;
  }

  push(event: AgentEvent): void {
    this.queue.push(event);
    if (this.queue.length > this.maxEvents) {
      const index = this.queue.findIndex((e) => e.type === 'output');
      this.queue.splice(index === -1 ? 0 : index, 1);
      this.dropped += 1;
    }
  }

  /** Removes and returns the next batch (at least one event when not empty). */
  take(maxEvents = 500, maxChars = 4 * 1024 * 1024): AgentEvent[] {
    let chars = 0;
    let count = 0;
    while (count < this.queue.length && count < maxEvents) {
      const event = this.queue[count]!;
      chars += event.type === 'output' ? event.data.length + 200 : 200;
      if (count > 0 && chars > maxChars) break;
      count += 1;
    }
    return this.queue.splice(0, count);
  }

  /** Puts an unacknowledged batch back in front of anything queued since. */
  requeue(batch: AgentEvent[]): void {
    this.queue.unshift(...batch);
  }
}
