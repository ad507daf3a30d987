// The message-row writer thread's body (services/usage/message-writer-thread.ts owns the protocol and
// why it exists). It opens its own PostgreSQL pool on the parent's database URL (or, on SQLite, its own
// connection to the parent's WAL database file) and writes each batch
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
  /** PostgreSQL: the parent's URL. SQLite: unset, and `sqlitePath` names the file. */
  databaseUrl?: string;
  sqlitePath?: string;
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
// PostgreSQL: two connections (the batches come one at a time); idle connections close after a second,
// so a process that wrote a burst long ago holds none. Named, so an operator sees the thread's
// backends in pg_stat_activity. SQLite: one more connection to the same WAL file.
const database =
  data.databaseUrl === undefined
    ? await openDatabase({ sqlitePath: data.sqlitePath })
    : await openDatabase({ databaseUrl: named(data.databaseUrl), poolMax: 2 });
if (database.pool) database.pool.options.idleTimeoutMillis = 1_000;
/** The parent's clock at the batch's send (agent_sessions.updated_at), not this thread's. */
let at = new Date();
function named(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  url.searchParams.set('application_name', WRITER_APPLICATION_NAME);
  return url.href;
}
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
