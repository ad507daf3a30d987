// The message-row writer thread's body (services/usage/message-writer-thread.ts owns the protocol and
// why it exists). It opens its own PostgreSQL pool on the parent's database URL and writes each batch
// it is sent through the one ingestion path (services/usage/ingest.ts, `accounting: 'already-settled'`),
// one transaction per slice, exactly as the parent's queue did on its own thread. It answers every
// batch with `{id, ok}` or `{id, ok: false, error}` (the message only, cut to 200 characters: never a
// row, never the URL), and ends after a `close` message once its pool is closed.
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from '../../db/client.ts';
import { type IngestMessage, ingestService } from './ingest.ts';

export const WRITER_APPLICATION_NAME = 'svc-usage-writer';

export interface WriterData {
  entry: string;
  databaseUrl: string;
  /** Rows per transaction (the parent's WRITE_SLICE). */
  slice: number;
}
export type WriterRequest =
  | { type: 'write'; id: number; rows: IngestMessage[]; at: Date }
  | { type: 'close' };
export type WriterReply =
  | { id: number; ok: true }
  | { id: number; ok: false; error: string }
  | { closed: true };

const data = workerData as WriterData;
const port = parentPort;
if (port === null) throw new Error('message-writer-worker runs in a worker thread only');
// Two connections: the batches come one at a time; idle connections close after a second, so a
// process that wrote a burst long ago holds none.
// Named, so an operator sees the thread's backends in pg_stat_activity.
const url = new URL(data.databaseUrl);
url.searchParams.set('application_name', WRITER_APPLICATION_NAME);
const database = await openDatabase({ databaseUrl: url.href, poolMax: 2 });
if (database.pool) database.pool.options.idleTimeoutMillis = 1_000;
/** The parent's clock at the batch's send (agent_sessions.updated_at), not this thread's. */
let at = new Date();
const ingest = ingestService({ database, now: () => at });
const settled = { accounting: 'already-settled' } as const;

port.on('message', (msg: WriterRequest) => {
  if (msg.type === 'close') {
    void database.close().finally(() => {
      port.postMessage({ closed: true } satisfies WriterReply);
      port.close();
    });
    return;
  }
  void (async () => {
    try {
      at = msg.at;
      for (let i = 0; i < msg.rows.length; i += data.slice)
        await ingest.ingestMessages(msg.rows.slice(i, i + data.slice), settled);
      port.postMessage({ id: msg.id, ok: true } satisfies WriterReply);
    } catch (error) {
      const text = String((error as Error)?.message ?? error).slice(0, 200);
      port.postMessage({ id: msg.id, ok: false, error: text } satisfies WriterReply);
    }
  })();
});
