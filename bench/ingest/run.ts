// bench/ingest: messages per second through `POST /api/upload/batch` (batches of --batch messages,
// sent one after another) beside the raw insert rate of the same rows into the same kind of database
// (a fresh one, same schema: migrations to head, indexes and the full-text triggers of migration 0013)
// with `INSERT ... ON CONFLICT DO NOTHING` in --batch-row transactions, in one run. Each phase gets a
// fresh database (SQLite in a temp dir, or a new PostgreSQL database when DATABASE_URL is set) seeded
// with the same users and tool accounts. No Temporal server: uploads never touch it.
//
//   npm run bench -- ingest [--messages 200000] [--batch 10000] [--days 30] [--mix collector|random]
//   DATABASE_URL=postgres://postgres:postgres@127.0.0.1:5432/postgres npm run bench -- ingest
//   node --cpu-prof --cpu-prof-dir /tmp/prof --import tsx bench/ingest/run.ts   # profile the API side
import { parseArgs } from 'node:util';
import type { DatabaseHandle } from '../../db/client.ts';
import { openBenchDatabase, startStack } from '../support/stack.ts';
import { machine, percentile } from '../support/stats.ts';
import { type BenchMessage, KNOWN_SENDERS, type Mix, makeMessages, senderAccount } from './messages.ts';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '200000' },
    batch: { type: 'string', default: '10000' },
    days: { type: 'string', default: '30' },
    mix: { type: 'string', default: 'collector' },
  },
});
const total = Number(values.messages);
const batch = Number(values.batch);
const days = Number(values.days);
const mix = values.mix as Mix;
if (mix !== 'collector' && mix !== 'random') throw new Error('--mix is collector or random');
const WARMUP = 2_000;
const KEY = 'bench-upload-key';
/** Rows per INSERT statement in the raw phase (parameters stay below SQLite's limit). */
const RAW_ROWS_PER_STATEMENT = 500;

interface Phase {
  database: DatabaseHandle;
  /** Tool account -> [user id, tenant id], as the upload resolves senders. */
  owners: Map<string, [number, number]>;
}

/** Seeds a fresh migrated database with two tenants of KNOWN_SENDERS / 2 users each, one tool account each. */
async function seed(database: DatabaseHandle): Promise<Phase> {
  const owners = new Map<string, [number, number]>();
  const tenants: number[] = [];
  for (const slug of ['bench-a', 'bench-b']) {
    const [t] = await database.sql.query<{ id: number }>(
      'INSERT INTO tenants (name, slug) VALUES (?, ?) RETURNING id',
      [slug, slug],
    );
    tenants.push(Number(t!.id));
  }
  for (let i = 0; i < KNOWN_SENDERS; i++) {
    const tenant = tenants[i % 2]!;
    const [u] = await database.sql.query<{ id: number }>(
      `INSERT INTO users (username, password_hash, tenant_id) VALUES (?, 'x', ?) RETURNING id`,
      [`dev-${i}`, tenant],
    );
    await database.sql.query(
      `INSERT INTO user_tool_accounts (user_id, tool_account, tool_type) VALUES (?, ?, 'claude')`,
      [Number(u!.id), senderAccount(i)],
    );
    owners.set(senderAccount(i), [Number(u!.id), tenant]);
  }
  return { database, owners };
}

const COLUMNS = [
  'date',
  'tool_name',
  'host_name',
  'message_id',
  'role',
  'content',
  'tokens_used',
  'input_tokens',
  'output_tokens',
  'model',
  '"timestamp"',
  'sender_id',
  'conversation_id',
  'user_id',
  'tenant_id',
];
const ROW = `(${COLUMNS.map(() => '?').join(', ')})`;

/** The raw rate: the rows alone, multi-row INSERT ... ON CONFLICT DO NOTHING, `batch` rows a transaction. */
async function rawInsert(p: Phase, rows: BenchMessage[]) {
  for (let i = 0; i < rows.length; i += batch) {
    const tx = rows.slice(i, i + batch);
    await p.database.transaction(async ({ sql }) => {
      for (let j = 0; j < tx.length; j += RAW_ROWS_PER_STATEMENT) {
        const part = tx.slice(j, j + RAW_ROWS_PER_STATEMENT);
        const params: unknown[] = [];
        for (const m of part) {
          const owner = p.owners.get(m.sender_id);
          params.push(
            m.date,
            m.tool_name,
            m.host_name,
            m.message_id,
            m.role,
            m.content,
            m.input_tokens + m.output_tokens,
            m.input_tokens,
            m.output_tokens,
            m.model,
            new Date(m.timestamp),
            m.sender_id,
            m.conversation_id,
            owner?.[0] ?? null,
            owner?.[1] ?? 1,
          );
        }
        await sql.query(
          `INSERT INTO daily_messages (${COLUMNS.join(', ')}) VALUES ${part.map(() => ROW).join(', ')}
           ON CONFLICT (date, tool_name, message_id, host_name) DO NOTHING`,
          params,
        );
      }
    });
  }
}

async function countMessages(p: Phase) {
  const [r] = await p.database.sql.query<{ n: number }>('SELECT COUNT(*) AS n FROM daily_messages');
  return Number(r!.n);
}

const rate = (n: number, ms: number) => Math.round(n / (ms / 1000));
const median = (xs: number[]) => percentile(xs, 0.5);

async function main() {
  const rows = makeMessages(0, total, { total, days, mix });
  const warmup = makeMessages(total, WARMUP, { total, days, mix });
  const bytes = rows.reduce((a, m) => a + JSON.stringify(m).length + 1, 0);

  // Raw phase.
  const rawDb = await openBenchDatabase();
  const raw = await seed(rawDb.database);
  let rawMs: number;
  let rawCpu: NodeJS.CpuUsage;
  try {
    await rawInsert(raw, warmup);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await rawInsert(raw, rows);
    rawMs = performance.now() - t0;
    rawCpu = process.cpuUsage(cpu0);
    if ((await countMessages(raw)) !== total + WARMUP) throw new Error('raw: not every row was stored');
  } finally {
    await rawDb.close();
  }

  // API phase: the bodies are serialised before the clock starts (a collector has them ready too).
  let phase: Phase | undefined;
  const api = await startStack({
    env: { SVC_UPLOAD_AUTH_KEY: KEY },
    prepare: async (deps) => {
      phase = await seed(deps.database);
    },
  });
  const post = async (body: string) => {
    const res = await fetch(`${api.url}/api/upload/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-upload-auth': KEY },
      body,
    });
    const answer = (await res.json()) as { messages: { stored: number } };
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${JSON.stringify(answer).slice(0, 300)}`);
    return answer.messages.stored;
  };
  let apiMs = 0;
  const perBatch: number[] = [];
  let cpu = process.cpuUsage();
  try {
    await post(JSON.stringify({ messages: warmup }));
    const bodies: string[] = [];
    for (let i = 0; i < rows.length; i += batch)
      bodies.push(JSON.stringify({ messages: rows.slice(i, i + batch) }));
    cpu = process.cpuUsage();
    let stored = 0;
    for (const list of bodies) {
      const t0 = performance.now();
      stored += await post(list);
      const ms = performance.now() - t0;
      perBatch.push(ms);
      apiMs += ms;
    }
    cpu = process.cpuUsage(cpu);
    if (stored !== total || (await countMessages(phase!)) !== total + WARMUP)
      throw new Error(`api: ${stored} of ${total} rows stored`);
  } finally {
    await api.close();
  }
  const cpuPerMessage = (c: NodeJS.CpuUsage) => `${((c.user + c.system) / total).toFixed(0)} us/message`;

  const apiRate = rate(total, apiMs);
  const rawRate = rate(total, rawMs);
  console.log(
    `bench/ingest  database=${api.database.dialect}  messages=${total}  batch=${batch}  days=${days}  mix=${mix}  ` +
      `body=${(bytes / total).toFixed(0)} B/message  ${machine()}`,
  );
  console.log(
    `raw INSERT ... ON CONFLICT DO NOTHING (${batch}-row transactions)  ${String(rawRate).padStart(7)} messages/s  (${(rawMs / 1000).toFixed(1)} s; process CPU ${cpuPerMessage(rawCpu)})`,
  );
  console.log(
    `POST /api/upload/batch (${batch}-message batches)          ${String(apiRate).padStart(7)} messages/s  (${(apiMs / 1000).toFixed(1)} s; batch p50 ${median(perBatch).toFixed(0)} ms; process CPU ${cpuPerMessage(cpu)})`,
  );
  console.log(`ratio upload : raw  ${(apiRate / rawRate).toFixed(2)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
