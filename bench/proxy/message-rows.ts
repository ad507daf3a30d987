// Micro-bench of the proxy's message rows (issue 16 item 4): queues N answered calls of one remote
// session with remoteMessages().recordProxiedCall and writes them with flush(), on a fresh database
// (SQLite in a temp dir, or the PostgreSQL database DATABASE_URL names: use a throwaway database, the
// bench adds a tenant, a user and a session to it). Prints CPU and wall time per row, and the main
// thread's busy time (SVC_USAGE_WRITER_THREAD=off keeps the PostgreSQL writes on the main thread).
//   npx tsx bench/proxy/message-rows.ts [rows=20000] [rounds=3]
// Run with `node --cpu-prof --import tsx bench/proxy/message-rows.ts` to profile the flush.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { openDatabase } from '../../db/client.ts';
import { upgrade } from '../../migrations/runner.ts';
import { remoteMessages } from '../../services/usage/remote-messages.ts';

const rows = Number(process.argv[2] ?? 20_000);
const rounds = Number(process.argv[3] ?? 3);
const dir = mkdtempSync(path.join(tmpdir(), 'msg-rows-'));
const url = process.env.DATABASE_URL;
const database = await openDatabase(url ? { databaseUrl: url } : { sqlitePath: path.join(dir, 'b.sqlite') });
try {
  await upgrade(database);
  const tag = `bench-${process.pid}-${Date.now()}`;
  await database.sql.query('INSERT INTO tenants (name, slug) VALUES (?, ?)', [tag, tag]).catch(async () => {
    await database.sql.query('INSERT INTO tenants (name) VALUES (?)', [tag]);
  });
  const [t] = await database.sql.query<{ id: number }>('SELECT id FROM tenants WHERE name = ?', [tag]);
  await database.sql.query('INSERT INTO users (username, password_hash, tenant_id) VALUES (?, ?, ?)', [
    tag,
    'x',
    t!.id,
  ]);
  const [u] = await database.sql.query<{ id: number }>('SELECT id FROM users WHERE username = ?', [tag]);
  await database.sql.query(
    'INSERT INTO agent_sessions (session_id, tenant_id, tool_name, host_name, user_id) VALUES (?, ?, ?, ?, ?)',
    [tag, t!.id, 'cli_alpha', `host-${tag}`, u!.id],
  );
  const thread = process.env.SVC_USAGE_WRITER_THREAD === 'off' ? 'off' : 'on';
  const messages = remoteMessages({
    database,
    now: () => new Date(),
    settings: { SVC_USAGE_WRITER_THREAD: thread },
  });
  const usage = {
    inputTokens: 12,
    outputTokens: 30,
    totalTokens: 42,
    model: 'gpt-4o-mini',
    estimated: false,
  };
  for (let r = 0; r < rounds; r++) {
    const day = new Date().toISOString().slice(0, 10);
    const cpu0 = process.cpuUsage();
    const elu0 = performance.eventLoopUtilization();
    const t0 = performance.now();
    for (let i = 0; i < rows; i++)
      messages.recordProxiedCall({
        sessionId: tag,
        userId: u!.id,
        tenantId: t!.id,
        toolName: 'cli_alpha',
        hostName: `host-${tag}`,
        projectPath: '/tmp/p',
        requestId: `req-${i}`,
        username: tag,
        day,
        at: new Date(),
        usage: usage as never,
        provider: 'openai',
        endpoint: '/v1/chat/completions',
      });
    const t1 = performance.now();
    await messages.flush();
    const t2 = performance.now();
    const cpu = process.cpuUsage(cpu0);
    const busy = performance.eventLoopUtilization(elu0).active;
    console.log(
      `round ${r + 1}: ${rows} rows; queue ${(((t1 - t0) * 1000) / rows).toFixed(1)} us/row, flush ${(((t2 - t1) * 1000) / rows).toFixed(1)} us/row wall; CPU ${((cpu.user + cpu.system) / rows).toFixed(1)} us/row (all threads), main thread busy ${((busy * 1000) / rows).toFixed(1)} us/row${messages.writesOnThread() ? ' (rows written by the writer thread)' : ''}`,
    );
  }
  const [c] = await database.sql.query<{ n: number; m: number }>(
    'SELECT COUNT(*) AS n, (SELECT message_count FROM agent_sessions WHERE session_id = ?) AS m FROM daily_messages WHERE agent_session_id = ?',
    [tag, tag],
  );
  console.log(`stored ${c!.n} rows, session message_count ${c!.m}`);
  messages.stopTimers();
  await messages.closeWriterThread();
} finally {
  await database.close();
  rmSync(dir, { recursive: true, force: true });
}
