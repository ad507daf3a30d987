// The data of bench/web-dashboard: N messages (default 1,000,000) over the last `days` days (default
// 30, ending today), for `users` users in `tenants` tenants, `tools` tools and 20 hosts, half of them
// assistant messages (requests, spec rule 3), loaded fast: multi-row INSERTs of the ingest repository
// (db/repositories/usage/ingest.ts, 500 rows a statement) in transactions of 10,000 rows, then the
// aggregates the dashboard reads are derived from the messages in SQL, once:
//   daily_usage, tenant_usage    INSERT ... SELECT ... GROUP BY (token figures, tenant totals)
//   daily_stats, hourly_stats,   the recompute of POST /api/summary/refresh
//   user_daily_stats,            (db/repositories/usage/recompute.ts), the code that rebuilds them in
//   usage_summary                production
// so the figures the page shows are the ones the ingest path would hold, without paying the
// per-message UPSERTs of the ingest service (bench/ingest and bench/analytics measure those).
// A fixed seed: every run loads the same rows. quota_usage is left empty (it counts proxied and
// uploaded usage against limits as it happens; the administrator the page is opened as has no limits).
import type { DatabaseHandle } from '../../db/client.ts';
import { ingestRepository } from '../../db/repositories/usage/ingest.ts';
import { recomputeRepository } from '../../db/repositories/usage/recompute.ts';
import type { MessageRow } from '../../domain/usage/ingest-rows.ts';
import { addDays } from '../../domain/usage/read-dates.ts';
import { mulberry32 } from '../support/random.ts';

export interface SeedShape {
  messages: number;
  users: number;
  tenants: number;
  tools: number;
  days: number;
  /** The last day of the data (YYYY-MM-DD, UTC): today, so the dashboard's ranges hold it. */
  today: string;
}

const HOSTS = 20;
const TRANSACTION_ROWS = 10_000;
const WORDS = 'fix test build refactor query index schema route token quota tenant review merge deploy'.split(
  ' ',
);

export interface SeedResult {
  messages: number;
  seconds: number;
  aggregateSeconds: number;
}

export async function seedDashboard(
  database: DatabaseHandle,
  shape: SeedShape,
  progress: (line: string) => void = () => {},
): Promise<SeedResult> {
  const sql = database.sql;
  const tenantIds: number[] = [];
  for (let t = 0; t < shape.tenants; t++) {
    const [row] = await sql.query<{ id: number }>(
      'INSERT INTO tenants (name, slug) VALUES (?, ?) RETURNING id',
      [`Dashboard bench tenant ${t}`, `dash-bench-${t}`],
    );
    tenantIds.push(Number(row!.id));
  }
  const users: Array<{ id: number; name: string; tenantId: number }> = [];
  for (let u = 0; u < shape.users; u++) {
    const tenantId = tenantIds[u % shape.tenants]!;
    const [row] = await sql.query<{ id: number }>(
      "INSERT INTO users (username, password_hash, role, tenant_id) VALUES (?, 'x', 'user', ?) RETURNING id",
      [`dash${u}`, tenantId],
    );
    users.push({ id: Number(row!.id), name: `dash${u}`, tenantId });
  }

  const rnd = mulberry32(14);
  const first = addDays(shape.today, -(shape.days - 1));
  const started = performance.now();
  let stored = 0;
  for (let i = 0; i < shape.messages; i += TRANSACTION_ROWS) {
    const rows: Array<MessageRow & { userId: number; tenantId: number }> = [];
    for (let j = i; j < Math.min(shape.messages, i + TRANSACTION_ROWS); j++) {
      const u = Math.floor(rnd() * shape.users);
      const user = users[u]!;
      // Oldest first, evenly over the days, the last ones today.
      const date = addDays(first, Math.floor((j / shape.messages) * shape.days));
      const assistant = j % 2 === 1;
      const input = assistant ? 200 + Math.floor(rnd() * 2000) : 0;
      const output = assistant ? 50 + Math.floor(rnd() * 800) : 0;
      const words: string[] = [];
      for (let w = 0; w < 6; w++) words.push(WORDS[Math.floor(rnd() * WORDS.length)]!);
      rows.push({
        date,
        toolName: `tool-${u % shape.tools}`,
        hostName: `host-${u % HOSTS}`,
        messageId: `dash-${j}`,
        parentId: null,
        role: assistant ? 'assistant' : 'user',
        content: words.join(' '),
        fullEntry: null,
        tokensUsed: input + output,
        inputTokens: input,
        outputTokens: output,
        model: assistant ? 'model-a' : null,
        timestamp: new Date(Date.parse(`${date}T00:00:00Z`) + Math.floor(rnd() * 86_400_000)),
        senderId: null,
        senderName: user.name,
        messageSource: 'bench',
        conversationId: `conv-${u}-${Math.floor(j / 40)}`,
        agentSessionId: null,
        projectPath: null,
        userId: user.id,
        tenantId: user.tenantId,
      });
    }
    stored += await database.transaction(
      async (tx) => (await ingestRepository(tx.sql).insertMessages(rows)).length,
    );
    const secs = (performance.now() - started) / 1000;
    progress(
      `seeding: ${stored.toLocaleString('en')} / ${shape.messages.toLocaleString('en')} messages, ${(stored / secs).toFixed(0)} msg/s`,
    );
  }
  const seconds = (performance.now() - started) / 1000;

  const t0 = performance.now();
  await database.transaction(async (tx) => {
    await tx.sql.query(
      `INSERT INTO daily_usage (tenant_id, date, tool_name, host_name, tokens_used, input_tokens, output_tokens,
                                request_count)
       SELECT tenant_id, date, tool_name, host_name, SUM(tokens_used), SUM(input_tokens), SUM(output_tokens),
              SUM(CASE WHEN role = 'assistant' THEN 1 ELSE 0 END)
       FROM daily_messages GROUP BY tenant_id, date, tool_name, host_name`,
    );
    await tx.sql.query(
      `INSERT INTO tenant_usage (tenant_id, date, tokens_used, requests_made, active_users)
       SELECT tenant_id, date, SUM(tokens_used), SUM(CASE WHEN role = 'assistant' THEN 1 ELSE 0 END),
              COUNT(DISTINCT user_id)
       FROM daily_messages GROUP BY tenant_id, date`,
    );
  });
  const recompute = recomputeRepository(database);
  for (const table of ['daily_stats', 'hourly_stats', 'user_daily_stats'] as const)
    await recompute.recomputeRange(table, null, first, shape.today);
  await recompute.recomputeUsageSummary(null);
  if (database.dialect === 'postgres') await sql.exec('VACUUM ANALYZE');
  else await sql.exec('ANALYZE');
  return { messages: stored, seconds, aggregateSeconds: (performance.now() - t0) / 1000 };
}
