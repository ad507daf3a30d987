// bench/analytics: latency of the usage read APIs on a year of a large team's data (issue 10,
// "Measure"): loads N messages (default 1,000,000) over 365 days for 200 users in 4 tenants, 5 tools
// and 20 hosts through the ingest service (services/usage/ingest.ts, the code /api/upload/batch
// runs: every aggregate written incrementally, chunks of 2,000 rows per transaction), then starts
// the API and prints p50/p99 of /api/summary, /api/trend, /api/usage/request/by-user and
// /api/messages?search= as a tenant user and as the system administrator.
//
//   npm run bench -- analytics [flags]   (the same as:)
//   npx tsx bench/analytics/run.ts [--messages 1000000] [--rounds 40] [--sqlite-file F]
//   DATABASE_URL=postgres://postgres:postgres@127.0.0.1:5432/postgres npx tsx bench/analytics/run.ts
//
// A fresh database each run: a temp SQLite file, or a new PostgreSQL database when DATABASE_URL is set
// (dropped at the end). `--sqlite-file F` keeps the SQLite database in F and reuses it when it already
// holds messages (loading is most of the run). After loading, ANALYZE runs (PostgreSQL: VACUUM
// ANALYZE, what autovacuum does after a bulk load), so the planner has statistics. Requests are sent
// one at a time (no concurrency) from this process; no Temporal server is needed.
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { DatabaseHandle } from '../../db/client.ts';
import { usersRepository } from '../../db/repositories/users.ts';
import { hashPassword } from '../../domain/passwords.ts';
import type { MessageRow } from '../../domain/usage/ingest-rows.ts';
import { addDays, dayOf } from '../../domain/usage/read-dates.ts';
import { ingestService } from '../../services/usage/ingest.ts';
import { login } from '../support/login.ts';
import { mulberry32 } from '../support/random.ts';
import { startStack } from '../support/stack.ts';
import { machine, percentile } from '../support/stats.ts';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '1000000' },
    users: { type: 'string', default: '200' },
    tenants: { type: 'string', default: '4' },
    tools: { type: 'string', default: '5' },
    days: { type: 'string', default: '365' },
    rounds: { type: 'string', default: '40' },
    'sqlite-file': { type: 'string' },
  },
});
const MESSAGES = Number(values.messages);
const USERS = Number(values.users);
const TENANTS = Number(values.tenants);
const TOOLS = Number(values.tools);
const DAYS = Number(values.days);
const ROUNDS = Number(values.rounds);
const HOSTS = 20;
const LOAD_BATCH = 20_000;
const PASSWORD = 'bench-password-123';

/** A fixed pseudo-random sequence, so every run loads the same data. */
const random = mulberry32;

/** 2,000 words; a message holds 8-15 of them, so one word is in ~0.6 % of messages. */
const VOCABULARY = Array.from({ length: 2000 }, (_, i) => `w${i.toString(36)}x${(i * 7919) % 97}`);
const SEARCH_WORD = VOCABULARY[1234]!;

async function load(deps: { database: DatabaseHandle; now: () => Date }) {
  const sql = deps.database.sql;
  const tenantIds: number[] = [];
  for (let t = 0; t < TENANTS; t++) {
    const [row] = await sql.query<{ id: number }>(
      'INSERT INTO tenants (name, slug) VALUES (?, ?) RETURNING id',
      [`Bench tenant ${t}`, `bench-${t}`],
    );
    tenantIds.push(Number(row!.id));
  }
  for (let u = 0; u < USERS; u++)
    await sql.query(
      "INSERT INTO users (username, password_hash, role, tenant_id) VALUES (?, 'x', 'user', ?)",
      [`dev${u}`, tenantIds[u % TENANTS]],
    );
  const ingest = ingestService(deps);
  const rnd = random(42);
  const today = dayOf(deps.now());
  const started = Date.now();
  let stored = 0;
  for (let i = 0; i < MESSAGES; i += LOAD_BATCH) {
    const rows: MessageRow[] = [];
    for (let j = i; j < Math.min(MESSAGES, i + LOAD_BATCH); j++) {
      const user = Math.floor(rnd() * USERS);
      // Oldest first, evenly over the days, the last one today.
      const day = addDays(today, -(DAYS - 1) + Math.floor((j / MESSAGES) * DAYS));
      const words = 8 + Math.floor(rnd() * 8);
      const content: string[] = [];
      for (let w = 0; w < words; w++) content.push(VOCABULARY[Math.floor(rnd() * VOCABULARY.length)]!);
      const assistant = j % 2 === 1;
      const input = assistant ? 200 + Math.floor(rnd() * 2000) : 0;
      const output = assistant ? 50 + Math.floor(rnd() * 800) : 0;
      rows.push({
        date: day,
        toolName: `tool-${user % TOOLS}`,
        hostName: `host-${user % HOSTS}`,
        messageId: `bench-${j}`,
        parentId: null,
        role: assistant ? 'assistant' : 'user',
        content: content.join(' '),
        fullEntry: null,
        tokensUsed: input + output,
        inputTokens: input,
        outputTokens: output,
        model: assistant ? 'model-a' : null,
        timestamp: new Date(Date.parse(`${day}T00:00:00Z`) + Math.floor(rnd() * 86_400_000)),
        senderId: null,
        senderName: `dev${user}`,
        messageSource: 'bench',
        conversationId: `conv-${user}-${Math.floor(j / 40)}`,
        agentSessionId: null,
        projectPath: null,
      });
    }
    stored += (await ingest.ingestMessages(rows)).inserted;
    const secs = (Date.now() - started) / 1000;
    process.stdout.write(
      `\rloading: ${stored.toLocaleString('en')} / ${MESSAGES.toLocaleString('en')} messages, ${(stored / secs).toFixed(0)} msg/s   `,
    );
  }
  process.stdout.write('\n');
  return { seconds: (Date.now() - started) / 1000, stored };
}

async function main() {
  const keep = values['sqlite-file'];
  const reuse = keep !== undefined && !process.env.DATABASE_URL && existsSync(keep);
  const admin = { username: 'bench-admin', password: PASSWORD };
  let loaded = { seconds: 0, stored: 0 };
  const reader = 'bench-reader';
  // Loading, ANALYZE and the reader account come before the server listens.
  const prepare = async (deps: Parameters<typeof load>[0]) => {
    const { database } = deps;
    const [have] = await database.sql.query<{ n: number }>('SELECT COUNT(*) AS n FROM daily_messages');
    if (!reuse || Number(have!.n) === 0) loaded = await load(deps);
    const t0 = Date.now();
    if (database.dialect === 'postgres') await database.sql.exec('VACUUM ANALYZE');
    else await database.sql.exec('ANALYZE');
    console.log(`analyze: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const [tenant] = await database.sql.query<{ tenant_id: number }>(
      "SELECT tenant_id FROM users WHERE username = 'dev0'",
    );
    const users = usersRepository(database);
    if (!(await users.findByUsername(reader)))
      await users.create({
        username: reader,
        passwordHash: await hashPassword(PASSWORD),
        role: 'user',
        isAdmin: false,
        tenantId: Number(tenant!.tenant_id),
      });
  };
  const api = await startStack({ admin, sqliteFile: keep, prepare });
  const { database, deps } = api;
  try {
    const who = {
      'tenant user': (await login(api.url, reader, PASSWORD)).cookie,
      'system admin': api.admin!.cookie,
    };
    const today = dayOf(deps.now());
    const paths = [
      '/api/summary',
      '/api/trend',
      '/api/usage/request/by-user',
      `/api/usage/request/by-user?date=${addDays(today, -100)}`,
      `/api/messages?search=${SEARCH_WORD}`,
    ];
    const [count] = await database.sql.query<{ n: number }>('SELECT COUNT(*) AS n FROM daily_messages');
    console.log(
      `bench/analytics  database=${database.dialect}  messages=${Number(count!.n).toLocaleString('en')}  users=${USERS}  tenants=${TENANTS}  tools=${TOOLS}  days=${DAYS}  rounds=${ROUNDS}  ${machine()}`,
    );
    if (loaded.stored)
      console.log(
        `loaded ${loaded.stored.toLocaleString('en')} messages through the ingest service in ${loaded.seconds.toFixed(0)} s (${(loaded.stored / loaded.seconds).toFixed(0)} msg/s)`,
      );
    for (const p of paths) {
      for (const [as, cookie] of Object.entries(who)) {
        const times: number[] = [];
        let body = '';
        for (let i = 0; i < ROUNDS + 3; i++) {
          const t0 = performance.now();
          const res = await fetch(`${api.url}${p}`, { headers: { cookie } });
          body = await res.text();
          if (res.status !== 200) throw new Error(`${p}: ${res.status} ${body}`);
          if (i >= 3) times.push(performance.now() - t0);
        }
        const note = p.includes('search') ? `  (${JSON.parse(body).messages.length} shown)` : '';
        console.log(
          `${`GET ${p}`.padEnd(52)} ${as.padEnd(13)} p50 ${percentile(times, 0.5).toFixed(1).padStart(6)} ms   p99 ${percentile(times, 0.99).toFixed(1).padStart(6)} ms${note}`,
        );
      }
    }
  } finally {
    await api.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
