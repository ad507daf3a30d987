// POST /api/summary/refresh (issue 10 item 2) on the real API, worker, Temporal and database. The
// decisive test: random uploads through POST /api/upload/batch (several users, tenants, tools, hosts,
// roles, dates over three recompute chunks, with and without timestamps, duplicates and replaced usage
// reports) give aggregates; the aggregates are then damaged, the refresh runs as a workflow, and every
// aggregate table is identical to what the incremental path held (rows sorted, ids ignored). Also: the
// host filter recomputes only that host's rows, the 202 answer and status endpoint with progress,
// role refusals and unknown ids.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import {
  summaryRefreshProgressQuery,
  summaryRefreshWorkflow,
} from '../../workflows/usage/summary-refresh.ts';
import { buildCast, type Cast } from '../support/actors.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { UPLOAD_KEY } from '../support/quota.ts';
import { waitUntil } from '../support/remote.ts';
import { api, type Session } from '../support/session.ts';

let app: TestApp;
let cast: Cast;

const q = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
  app.database.sql.query<T>(text, params);

/** Every aggregate an upload writes, by table: the columns compared (ids and updated_at left out). */
const AGGREGATES: Record<string, string> = {
  daily_stats:
    'date, tool_name, host_name, sender_name, total_tokens, total_input_tokens, total_output_tokens, message_count, project_id, project_path',
  hourly_stats:
    'date, hour, tool_name, host_name, total_tokens, total_input_tokens, total_output_tokens, message_count',
  user_daily_stats: 'user_id, date, requests, tokens, input_tokens, output_tokens, cache_tokens',
  usage_summary:
    'tool_name, host_name, days_count, total_tokens, avg_tokens, total_requests, total_input_tokens, total_output_tokens, first_date, last_date',
  daily_usage:
    'tenant_id, date, tool_name, host_name, tokens_used, input_tokens, output_tokens, cache_tokens, request_count, models_used, estimated_tokens',
  tenant_usage: 'tenant_id, date, tokens_used, requests_made, active_users',
  quota_usage: 'user_id, date, period, tokens_used, requests_used',
};

const norm = (v: unknown) => (typeof v === 'string' && /^[0-9]+$/.test(v) ? Number(v) : v);

async function snapshot(): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const [table, cols] of Object.entries(AGGREGATES)) {
    const rows = await q(`SELECT ${cols} FROM ${table}`);
    out[table] = rows.map((r) => JSON.stringify(Object.values(r).map(norm))).sort();
  }
  return out;
}

/** A small deterministic PRNG (mulberry32), so a failure can be replayed. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const as = (who: Session | undefined, method: string, path: string) =>
  api(app.url, method, path, { auth: who });

async function refresh(path = '/api/summary/refresh'): Promise<any> {
  const r = await as(cast.admin, 'POST', path);
  assert.equal(r.status, 202, JSON.stringify(r.body));
  assert.match(r.body.workflow_id, /^summary-refresh-/);
  assert.equal(r.body.status_url, `/api/summary/refresh/${r.body.workflow_id}`);
  return waitUntil(
    'the refresh to complete',
    async () => {
      const s = await as(cast.admin, 'GET', r.body.status_url);
      assert.equal(s.status, 200, JSON.stringify(s.body));
      assert.notEqual(s.body.status, 'failed', JSON.stringify(s.body));
      return s.body.status === 'completed' ? s.body : undefined;
    },
    60_000,
    200,
  );
}

before(async () => {
  app = await startTestApp({ worker: true });
  cast = await buildCast(app);
  const rand = prng(20261123);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rand() * list.length)]!;
  const users: string[] = [];
  for (let i = 0; i < 6; i++) {
    const name = `refresh-user-${i}-${randomUUID().slice(0, 6)}`;
    const [u] = await q<{ id: number }>(
      'INSERT INTO users (username, password_hash, tenant_id) VALUES (?, ?, ?) RETURNING id',
      [name, 'x', i % 2 ? cast.tenantA : cast.tenantB],
    );
    users.push(name);
    if (i < 2)
      await q('INSERT INTO user_tool_accounts (user_id, tool_account, tool_type) VALUES (?, ?, ?)', [
        u!.id,
        `${name}@laptop`,
        'claude',
      ]);
  }
  const senders = [...users, `${users[0]}@laptop`, `${users[1]}@laptop`, 'stranger', null];
  const tools = ['tool-a', 'tool-b', 'tool-c'];
  const hosts = ['host-1', 'host-2', 'localhost'];
  const roles = ['user', 'assistant', 'assistant', 'system'];
  const day = (n: number) => new Date(Date.UTC(2026, 0, 1) + n * 86_400_000).toISOString().slice(0, 10);
  const sent: any[] = [];
  for (let batch = 0; batch < 6; batch++) {
    const messages = Array.from({ length: 150 }, () => {
      const d = day(Math.floor(rand() * 75));
      const m: Record<string, unknown> = {
        message_id: randomUUID(),
        date: d,
        tool_name: pick(tools),
        host_name: pick(hosts),
        role: pick(roles),
        content: 'x',
        input_tokens: Math.floor(rand() * 500),
        output_tokens: Math.floor(rand() * 300),
        model: pick(['m1', 'm2', null]),
      };
      const sender = pick(senders);
      if (sender !== null) m.sender_name = sender;
      if (rand() < 0.8) m.timestamp = `${d}T${String(Math.floor(rand() * 24)).padStart(2, '0')}:17:00Z`;
      if (rand() < 0.2) m.tokens_used = Math.floor(rand() * 2000);
      return m;
    });
    // Duplicates: some earlier messages again, and a repeat inside the batch.
    const again = sent.filter(() => rand() < 0.05);
    sent.push(...messages);
    const usage = Array.from({ length: 8 }, () => ({
      date: day(Math.floor(rand() * 10)),
      tool_name: pick(tools),
      host_name: pick(hosts),
      tokens_used: Math.floor(rand() * 5000),
      input_tokens: Math.floor(rand() * 3000),
      output_tokens: Math.floor(rand() * 2000),
      cache_tokens: Math.floor(rand() * 100),
      request_count: Math.floor(rand() * 20),
      models_used: pick(['m1', 'm1,m3', '']),
    }));
    const r = await api(app.url, 'POST', '/api/upload/batch', {
      headers: UPLOAD_KEY,
      body: { messages: [...messages, ...again, messages[0]], usage },
    });
    assert.ok(r.status === 200, `upload batch: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  }
});
after(() => app?.close());

/** Damage in every recomputed table, on both hosts named. */
async function damage(hosts: string[]) {
  for (const h of hosts) {
    await q('UPDATE daily_stats SET total_tokens = total_tokens + 7 WHERE host_name = ?', [h]);
    await q('UPDATE hourly_stats SET message_count = message_count + 1 WHERE host_name = ?', [h]);
    await q(
      'UPDATE usage_summary SET total_requests = total_requests + 3, days_count = 99 WHERE host_name = ?',
      [h],
    );
    await q(
      `INSERT INTO daily_stats (date, tool_name, host_name, sender_name, total_tokens) VALUES ('2020-01-01', 'ghost', ?, '', 5)`,
      [h],
    );
  }
  await q('UPDATE user_daily_stats SET tokens = tokens + 11');
  await q(`DELETE FROM hourly_stats WHERE date = (SELECT MIN(date) FROM hourly_stats)`);
}

test('refresh == incremental: every aggregate identical after random uploads and damage', async () => {
  const incremental = await snapshot();
  assert.ok(incremental.daily_stats!.length > 100 && incremental.user_daily_stats!.length > 20);
  assert.ok(incremental.usage_summary!.length >= 6);

  const before = await refresh();
  assert.deepEqual(await snapshot(), incremental, 'a refresh of correct figures changes nothing');
  assert.equal(before.progress.status, 'completed');
  assert.equal(before.progress.host, null);
  assert.equal(before.progress.first_date, '2026-01-01');
  assert.equal(
    before.progress.steps_total,
    3 * (3 + 1) + 1,
    'three tables in three 31-day chunks, then usage_summary',
  );
  assert.equal(before.progress.steps_done, before.progress.steps_total);
  assert.equal(before.progress.rows_written.daily_stats, incremental.daily_stats!.length);
  assert.equal(before.progress.rows_written.usage_summary, incremental.usage_summary!.length);
  // The same progress is what the workflow's query answers (GET reads it while a refresh runs).
  const handle = (await app.deps.temporal.client()).workflow.getHandle(before.workflow_id);
  assert.deepEqual(await handle.query(summaryRefreshProgressQuery), before.progress);

  await damage(['host-1', 'host-2', 'localhost']);
  assert.notDeepEqual(await snapshot(), incremental, 'the damage shows');
  await refresh();
  assert.deepEqual(await snapshot(), incremental);
});

test('?host= recomputes only that host', async () => {
  const incremental = await snapshot();
  await damage(['host-1', 'host-2']);
  const done = await refresh('/api/summary/refresh?host=host-1');
  assert.equal(done.progress.host, 'host-1');
  const after = await snapshot();
  for (const table of ['daily_stats', 'hourly_stats', 'usage_summary']) {
    const only = (rows: string[], h: string) => rows.filter((r) => r.includes(`"${h}"`));
    assert.deepEqual(only(after[table]!, 'host-1'), only(incremental[table]!, 'host-1'), `${table} host-1`);
    assert.notDeepEqual(
      only(after[table]!, 'host-2'),
      only(incremental[table]!, 'host-2'),
      `${table} host-2 untouched`,
    );
  }
  await refresh();
  assert.deepEqual(await snapshot(), incremental);
});

test('a refresh no worker has picked up yet reports `running` without progress', async () => {
  const client = await app.deps.temporal.client();
  const id = `summary-refresh-${randomUUID()}`;
  const handle = await client.workflow.start(summaryRefreshWorkflow, {
    workflowId: id,
    taskQueue: `no-worker-${randomUUID()}`,
    args: [{ host: null }],
  });
  try {
    const r = await as(cast.admin, 'GET', `/api/summary/refresh/${id}`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual([r.body.workflow_id, r.body.status, r.body.progress], [id, 'running', null]);
  } finally {
    await handle.terminate('test over');
  }
  const ended = await as(cast.admin, 'GET', `/api/summary/refresh/${id}`);
  assert.equal(ended.body.status, 'terminated');
  assert.equal(typeof ended.body.error, 'string');
});

test('refresh is admin only; status of unknown ids is 404; a bad host is 400', async () => {
  for (const who of ['manager', 'user', 'readonly'] as const) {
    const r = await as(cast.actors[who].session, 'POST', '/api/summary/refresh');
    assert.deepEqual([r.status, r.body.error], [403, 'Admin access required'], who);
    assert.equal(
      (await as(cast.actors[who].session, 'GET', `/api/summary/refresh/summary-refresh-${randomUUID()}`))
        .status,
      403,
    );
  }
  assert.equal((await as(undefined, 'POST', '/api/summary/refresh')).status, 401);
  assert.equal(
    (await as(undefined, 'GET', `/api/summary/refresh/summary-refresh-${randomUUID()}`)).status,
    401,
  );
  const unknown = await as(cast.admin, 'GET', `/api/summary/refresh/summary-refresh-${randomUUID()}`);
  assert.deepEqual([unknown.status, unknown.body.error], [404, 'Summary refresh not found']);
  // Only refresh workflows are reachable, whatever else runs in the namespace.
  assert.equal((await as(cast.admin, 'GET', '/api/summary/refresh/remote-session-x')).status, 404);
  const bad = await as(cast.admin, 'POST', `/api/summary/refresh?host=${'h'.repeat(256)}`);
  assert.equal(bad.status, 400);
  assert.match(bad.body.error, /^host: /);

  // A tenant admin may start one too; it is audited.
  const ta = await as(cast.actors.tenant_admin.session, 'POST', '/api/summary/refresh');
  assert.equal(ta.status, 202);
  const [audit] = await q<Record<string, unknown>>(
    `SELECT user_id FROM audit_logs WHERE action = 'SUMMARY_REFRESH' AND resource_id = ?`,
    [ta.body.workflow_id],
  );
  assert.equal(Number(audit?.user_id), cast.actors.tenant_admin.id);
  await waitUntil(
    'the tenant admin refresh',
    async () => (await as(cast.admin, 'GET', ta.body.status_url)).body.status === 'completed',
    60_000,
    200,
  );
});
