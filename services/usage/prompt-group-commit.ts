// Group commit for the user rows of remote prompts (services/usage/remote-messages.ts recordPrompt).
//
// Why: every prompt row goes through the one ingestion transaction, which upserts the same statistics
// rows for a user, day, tool and host (daily_stats, user_daily_stats, hourly_stats, usage_summary).
// Written one transaction per chat request, concurrent chats of one user queue on those rows' locks,
// each holding them across several round trips: measured with 40 sessions chatting at once on two
// instances (test/integration/scale-two-instances.test.ts), PostgreSQL showed most backends waiting on
// `Lock/transactionid` at `INSERT INTO daily_stats`, and the chat rate fell to ~80/s.
//
// How: a row is submitted and its caller waits for the commit of the transaction that holds it (the
// chat still answers after its row is stored, as before). While one write runs, the rows submitted
// meanwhile wait and are written together by the next one (at most `maxBatch` a transaction). A lone
// prompt is written at once, with no added delay. When a write fails, every caller of that batch gets
// the error (and queues its row for the retry, as a single failed write did before).
export interface GroupCommit<T> {
  /** Resolves once the batch holding `item` is committed; rejects with that batch's error. */
  submit(item: T): Promise<void>;
  /** Items submitted and not yet committed or failed. */
  pending(): number;
}

export function groupCommit<T>(write: (items: T[]) => Promise<void>, maxBatch: number): GroupCommit<T> {
  const waiting: { item: T; resolve: () => void; reject: (err: unknown) => void }[] = [];
  let running = false;
  let inFlight = 0;

  async function drain(): Promise<void> {
    running = true;
    try {
      while (waiting.length) {
        const batch = waiting.splice(0, maxBatch);
        inFlight = batch.length;
        try {
          await write(batch.map((b) => b.item));
          for (const b of batch) b.resolve();
        } catch (err) {
          for (const b of batch) b.reject(err);
        } finally {
          inFlight = 0;
        }
      }
    } finally {
      running = false;
    }
  }

  return {
    submit(item) {
      return new Promise<void>((resolve, reject) => {
        waiting.push({ item, resolve, reject });
        if (!running) void drain();
      });
    },
    pending: () => waiting.length + inFlight,
  };
}
