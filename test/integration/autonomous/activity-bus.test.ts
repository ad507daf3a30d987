// The stored activity bus (services/autonomous/activity-bus.ts) across processes: two database handles
// on one database stand for two processes (a worker publishing, an API instance reading), each with
// its own connection(s) and its own bus. What one publishes the other reads in order and, on
// PostgreSQL, is woken for by NOTIFY; a replay after a seq gives exactly the later events; concurrent
// publishers for one workflow get gap-free seqs; events and the per-workflow tail are bounded; the
// retention purge removes old rows. Also prints the cost of a burst of 1000 events (no assertion on it).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type DatabaseHandle, openDatabase } from '../../../db/client.ts';
import { retentionRepository } from '../../../db/repositories/compliance/retention.ts';
import { upgrade } from '../../../migrations/runner.ts';
import {
  ACTIVITY_EVENT_MAX_CHARS,
  ACTIVITY_KEEP_PER_WORKFLOW,
  type AutonomousActivityEvent,
  activityBusFor,
} from '../../../services/autonomous/activity-bus.ts';
import { workflowRowIn } from '../../support/autonomous-rows.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';

let testDb: TestDatabase;
/** The "worker" and the "API instance": one database, two handles. */
let worker: DatabaseHandle;
let api: DatabaseHandle;
let userId: number;

const open = () => openDatabase({ databaseUrl: testDb.databaseUrl, sqlitePath: testDb.sqlitePath });

before(async () => {
  testDb = await createTestDatabase();
  worker = await open();
  await upgrade(worker, 'head');
  api = await open();
  const { db, t } = worker;
  const [u] = await db
    .insert(t.users)
    .values({ username: 'activity-owner', passwordHash: 'x' })
    .returning({ id: t.users.id });
  userId = u!.id;
});
after(async () => {
  await worker?.close();
  await api?.close();
  await testDb?.drop();
});

const event = (workflowId: string, text: string, extra: Partial<AutonomousActivityEvent> = {}) => ({
  workflowId,
  line: 'main',
  type: 'assistant_text' as const,
  at: new Date().toISOString(),
  text,
  ...extra,
});

async function until<T>(what: string, f: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

test('published in one process, read in order in another; a replay after a seq gives exactly the rest', async () => {
  const wf = await workflowRowIn(worker, userId, null, []);
  const other = await workflowRowIn(worker, userId, null, []);
  const pub = activityBusFor(worker);
  const sub = activityBusFor(api);
  let woken = 0;
  const off = sub.onStored(wf, () => woken++);
  const local: AutonomousActivityEvent[] = [];
  const offLocal = pub.subscribe(wf, (e) => local.push(e));
  // Let the LISTEN connection of the reading handle's remote bus come up (PostgreSQL).
  if (api.dialect === 'postgres') await sleep(500);

  for (let i = 1; i <= 5; i++) pub.publish(event(wf, `step ${i}`));
  pub.publish(event(other, 'not this workflow'));
  await pub.flush();

  const got = await until('5 events on the other handle', async () => {
    const rows = await sub.after(wf, 0, 100);
    return rows.length === 5 ? rows : undefined;
  });
  assert.deepEqual(
    got.map((e) => [e.seq, e.text, e.workflowId]),
    [1, 2, 3, 4, 5].map((i) => [i, `step ${i}`, wf]),
  );
  if (api.dialect === 'postgres') await until('a NOTIFY wake-up', async () => (woken > 0 ? true : undefined));
  else assert.ok(sub.recheckMs && sub.recheckMs > 0, 'SQLite readers re-read by themselves');
  // This process's subscribers got them once stored, with their seq, without a read.
  assert.deepEqual(
    local.map((e) => [e.seq, e.text]),
    [1, 2, 3, 4, 5].map((i) => [i, `step ${i}`]),
  );

  const rest = await sub.after(wf, 2, 100);
  assert.deepEqual(
    rest.map((e) => [e.seq, e.text]),
    [3, 4, 5].map((i) => [i, `step ${i}`]),
  );
  assert.deepEqual(await sub.after(wf, 5, 100), []);
  assert.equal(await sub.lastSeq(wf), 5);
  assert.deepEqual(
    (await sub.after(other, 0, 100)).map((e) => e.text),
    ['not this workflow'],
  );
  off();
  offLocal();
});

test('two processes publishing for one workflow get one gap-free sequence', async () => {
  const wf = await workflowRowIn(worker, userId, null, []);
  const a = activityBusFor(worker);
  const b = activityBusFor(api);
  // On SQLite two handles in ONE process cannot write at once: BEGIN IMMEDIATE of the second blocks
  // the only thread (busy_timeout) while the first awaits inside its transaction. Separate processes
  // just wait for the lock; here the writes take turns. On PostgreSQL they race for the same seqs.
  const together = worker.dialect === 'postgres';
  for (let i = 0; i < 40; i++) {
    a.publish(event(wf, `a${i}`));
    if (!together) await a.flush();
    b.publish(event(wf, `b${i}`));
    if (!together) await b.flush();
    if (i % 10 === 9) await sleep(1);
  }
  await Promise.all([a.flush(), b.flush()]);
  const all = await b.after(wf, 0, 1000);
  assert.deepEqual(
    all.map((e) => e.seq),
    Array.from({ length: 80 }, (_, i) => i + 1),
  );
  // Each publisher's own events keep their order.
  for (const p of ['a', 'b'])
    assert.deepEqual(
      all.filter((e) => e.text!.startsWith(p)).map((e) => e.text),
      Array.from({ length: 40 }, (_, i) => `${p}${i}`),
    );
});

test('a burst of 1000 events is stored in few writes; events and the per-workflow tail are bounded', async (t) => {
  const wf = await workflowRowIn(worker, userId, null, []);
  const bus = activityBusFor(worker);
  const started = performance.now();
  for (let i = 1; i <= 1000; i++) bus.publish(event(wf, `line ${i}`));
  const queued = performance.now();
  await bus.flush();
  const stored = performance.now();
  t.diagnostic(
    `${worker.dialect}: 1000 events published in ${(queued - started).toFixed(1)} ms, stored in ${(stored - queued).toFixed(0)} ms`,
  );
  assert.equal(await bus.lastSeq(wf), 1000);

  bus.publish(event(wf, 'x'.repeat(100_000), { input: 'y'.repeat(100_000), type: 'tool_use', tool: 'Edit' }));
  for (let i = 0; i < 150; i++) bus.publish(event(wf, `more ${i}`));
  await bus.flush();
  const [big] = await bus.after(wf, 1000, 1);
  assert.equal(big!.seq, 1001);
  assert.equal(big!.tool, 'Edit');
  assert.ok(JSON.stringify(big).length <= ACTIVITY_EVENT_MAX_CHARS + 50, 'cut to the bound');
  assert.ok(big!.text!.startsWith('xxx') && big!.text!.length < 2000);
  const { sql } = worker;
  const [n] = await sql.query<{ n: unknown; low: unknown }>(
    'SELECT COUNT(*) AS n, MIN(seq) AS low FROM autonomous_activity_events WHERE workflow_id = ?',
    [wf],
  );
  assert.ok(Number(n!.n) <= ACTIVITY_KEEP_PER_WORKFLOW + 100, `${n!.n} rows kept`);
  assert.ok(Number(n!.low) > 1151 - ACTIVITY_KEEP_PER_WORKFLOW - 100, `oldest kept ${n!.low}`);
  assert.equal(await bus.lastSeq(wf), 1151);
});

test('the retention purge removes old events; deleting the workflow removes its events', async () => {
  const wf = await workflowRowIn(worker, userId, null, []);
  const bus = activityBusFor(worker);
  bus.publish(event(wf, 'old'));
  bus.publish(event(wf, 'new'));
  await bus.flush();
  const { sql } = worker;
  const old = new Date(Date.now() - 40 * 86_400_000);
  await sql.query('UPDATE autonomous_activity_events SET created_at = ? WHERE workflow_id = ? AND seq = 1', [
    sql.dialect === 'sqlite' ? old.getTime() : old.toISOString(),
    wf,
  ]);
  const now = new Date();
  const purged = await retentionRepository(worker).purgeExpired(
    { now, before: new Date(now.getTime() - 30 * 86_400_000) },
    true,
  );
  assert.ok((purged.autonomous_activity_events ?? 0) >= 1);
  assert.deepEqual(
    (await bus.after(wf, 0, 10)).map((e) => e.text),
    ['new'],
  );
  await sql.query('DELETE FROM autonomous_workflows WHERE workflow_id = ?', [wf]);
  assert.deepEqual(await bus.after(wf, 0, 10), []);
  // Events of a workflow that is gone are dropped, not stored.
  bus.publish(event(wf, 'after delete'));
  await bus.flush();
  assert.deepEqual(await bus.after(wf, 0, 10), []);
});
