// Exponential backoff with full jitter, bounded to [base, max].
// Full jitter spreads reconnecting agents out after a server restart instead of
// having all of them retry in lock-step at exactly base * 2^n.

export function backoffDelayMs(
  attempt: number,
  baseMs: number,
  maxMs: number,
  random: () => number = Math.random,
): number {
  const base = Math.max(0, baseMs);
  const max = Math.max(base, maxMs);
  // attempt 0 already gets a window [base, 2*base] so the first retry is jittered too.
  const ceiling = Math.min(max, base * 2 ** (Math.max(0, attempt) + 1));
  return base + random() * (ceiling - base);
}

export class Backoff {
  private attempt = 0;

  constructor(
    private readonly baseMs: number,
    private readonly maxMs: number,
    private readonly random: () => number = Math.random,
  ) {}

  /** Delay before the next retry; each call widens the window until it reaches maxMs. */
  next(): number {
    const delay = backoffDelayMs(this.attempt, this.baseMs, this.maxMs, this.random);
    // Cap the exponent so 2 ** attempt never overflows on a very long outage.
    if (this.attempt < 30) this.attempt += 1;
    return delay;
  }

  /** Call after a successful request. */
  reset(): void {
    this.attempt = 0;
  }

  get attempts(): number {
    return this.attempt;
  }
}

/** setTimeout as a promise that an AbortSignal can cut short (resolves, never rejects). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
