// Idempotent milestone start on a real migrated database (SQLite, or PostgreSQL with DATABASE_URL):
// migration 0029 (workflow_milestones.step_key, unique per workflow, NULLs distinct; down and up
// again), milestonesRepository.begin (a second call with the same key, e.g. an activity retried after
// the worker died past the insert, returns the first row; concurrent calls make one row; earlier
// attempts of the same kind still in_progress become interrupted in the same call), and a fork's
// copied history carrying no keys so the fork's own steps may reuse them.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { and, eq } from 'drizzle-orm';
import { type DatabaseHandle, openDatabase } from '../../../db/client.ts';
import { milestonesRepository } from '../../../db/repositories/autonomous/milestones.ts';
import { workflowsRepository } from '../../../db/repositories/autonomous/workflows.ts';
import { isUniqueViolation } from '../../../db/unique-violation.ts';
import { columnNames } from '../../../migrations/introspect.ts';
import { downgrade, upgrade } from '../../../migrations/runner.ts';
import { newWorkflowInput } from '../../support/autonomous-rows.ts';
import { createTestDatabase, type TestDatabase, usingPostgres } from '../../support/database.ts';

let testDb: TestDatabase;
let database: DatabaseHandle;
let workflows: ReturnType<typeof workflowsRepository>;
let milestones: ReturnType<typeof milestonesRepository>;
const now = new Date('2026-03-01T10:00:00Z');

before(async () => {
  testDb = await createTestDatabase();
  database = await openDatabase({ databaseUrl: testDb.databaseUrl, sqlitePath: testDb.sqlitePath });
  await upgrade(database, 'head');
  workflows = workflowsRepository(database);
  milestones = milestonesRepository(database);
});
after(async () => {
  await database.close();
  await testDb.drop();
});

async function newWorkflow(): Promise<string> {
  return (await workflows.create(newWorkflowInput(10, 1, now), now)).workflowId;
}

async function indexNames(): Promise<string[]> {
  const rows = usingPostgres()
    ? await database.sql.query<{ name: string }>(
        `SELECT indexname AS name FROM pg_indexes WHERE tablename = 'workflow_milestones'`,
      )
    : await database.sql.query<{ name: string }>(`SELECT name FROM pragma_index_list('workflow_milestones')`);
  return rows.map((r) => r.name);
}

test('0029: step_key and its unique index come and go with the revision', async () => {
  assert.ok((await columnNames(database.sql, 'workflow_milestones')).includes('step_key'));
  assert.ok((await indexNames()).includes('workflow_milestones_step_key'));
  // A row written before the revision is rolled back keeps its other columns.
  const wf = await newWorkflow();
  await milestones.begin(wf, { kind: 'plan', phase: 'planning', stepKey: 'planning:0:plan' }, now);
  // (Revisions added after 0029 by later work roll back and forward with it.)
  assert.ok((await downgrade(database, '0028_session_provider_error')).includes('0029_milestone_step_key'));
  assert.ok(!(await columnNames(database.sql, 'workflow_milestones')).includes('step_key'));
  assert.ok(!(await indexNames()).includes('workflow_milestones_step_key'));
  const [kept] = await database.sql.query<{ kind: string }>(
    'SELECT kind FROM workflow_milestones WHERE workflow_id = ?',
    [wf],
  );
  assert.equal(kept?.kind, 'plan');
  assert.ok((await upgrade(database, 'head')).includes('0029_milestone_step_key'));
  assert.ok((await indexNames()).includes('workflow_milestones_step_key'));
});

test('begin: a new key appends the next sequence, in_progress, with the key and attempt', async () => {
  const wf = await newWorkflow();
  const first = await milestones.add(wf, { kind: 'plan', phase: 'planning' }, now);
  const row = await milestones.begin(
    wf,
    {
      kind: 'implementation',
      phase: 'development',
      title: 'Implement',
      sessionLine: 'main',
      attempt: 1,
      stepKey: 'development:1:implement',
    },
    now,
  );
  assert.equal(first.sequence, 1);
  assert.equal(first.stepKey, null);
  assert.equal(row.sequence, 2);
  assert.equal(row.status, 'in_progress');
  assert.equal(row.stepKey, 'development:1:implement');
  assert.equal(row.attempt, 1);
  assert.equal(row.title, 'Implement');
  assert.equal(row.sessionLine, 'main');
  assert.equal(row.startedAt?.getTime(), now.getTime());
  assert.equal(row.finishedAt, null);
});

test('begin again with the same key (a retried activity) returns the first row, even finalized', async () => {
  const wf = await newWorkflow();
  const v = { kind: 'test' as const, phase: 'development' as const, stepKey: 'development:1:test' };
  const a = await milestones.begin(wf, v, now);
  const b = await milestones.begin(wf, { ...v, title: 'a different title' }, new Date(now.getTime() + 5000));
  assert.equal(b.id, a.id);
  assert.equal(b.title, null, 'the stored row, not the new values');
  assert.ok(await milestones.finalize(a.id, { status: 'completed', content: 'ok' }));
  const c = await milestones.begin(wf, v, now);
  assert.equal(c.id, a.id);
  assert.equal(c.status, 'completed');
  assert.equal((await milestones.list(wf)).length, 1);
  // The same key in another workflow is another step.
  const other = await newWorkflow();
  const d = await milestones.begin(other, v, now);
  assert.notEqual(d.id, a.id);
  assert.equal(d.sequence, 1);
});

test('begin marks earlier in_progress attempts of the same kind interrupted, in the same call', async () => {
  const wf = await newWorkflow();
  const v1 = await milestones.begin(
    wf,
    { kind: 'acceptance_verification', phase: 'acceptance_verification', attempt: 1, stepKey: 'verify:1' },
    now,
  );
  const doneEarlier = await milestones.begin(
    wf,
    { kind: 'plan_review', phase: 'planning', attempt: 1, stepKey: 'review:1' },
    now,
  );
  const otherKind = await milestones.begin(
    wf,
    { kind: 'test', phase: 'development', attempt: 1, stepKey: 'test:1' },
    now,
  );
  const v2 = await milestones.begin(
    wf,
    { kind: 'acceptance_verification', phase: 'acceptance_verification', attempt: 2, stepKey: 'verify:2' },
    now,
  );
  const byId = new Map((await milestones.list(wf)).map((r) => [r.id, r]));
  assert.equal(byId.get(v1.id)?.status, 'interrupted');
  assert.ok(byId.get(v1.id)?.finishedAt);
  assert.equal(byId.get(v2.id)?.status, 'in_progress');
  assert.equal(byId.get(otherKind.id)?.status, 'in_progress', 'another kind is not touched');
  assert.equal(byId.get(doneEarlier.id)?.status, 'in_progress');
  // Repeating the attempt-2 call (retry) neither adds a row nor touches the interrupted one again.
  const again = await milestones.begin(
    wf,
    { kind: 'acceptance_verification', phase: 'acceptance_verification', attempt: 2, stepKey: 'verify:2' },
    now,
  );
  assert.equal(again.id, v2.id);
  assert.equal((await milestones.list(wf)).length, 4);
  // A finalized earlier attempt stays as it was.
  assert.ok(await milestones.finalize(v2.id, { status: 'failed', error: 'verifier down' }));
  await milestones.begin(
    wf,
    { kind: 'acceptance_verification', phase: 'acceptance_verification', attempt: 3, stepKey: 'verify:3' },
    now,
  );
  assert.equal((await milestones.find(wf, v2.id))?.status, 'failed');
});

test('concurrent begins with one key make one row; with different keys, distinct sequences', async () => {
  const wf = await newWorkflow();
  // PostgreSQL: a second pool too, as a second worker retrying the activity would have.
  const second = usingPostgres()
    ? await openDatabase({ databaseUrl: testDb.databaseUrl, sqlitePath: testDb.sqlitePath })
    : database;
  try {
    const other = milestonesRepository(second);
    const v = { kind: 'implementation' as const, phase: 'development' as const, stepKey: 'dev:1:impl' };
    const rows = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? milestones : other).begin(wf, v, now)),
    );
    assert.equal(new Set(rows.map((r) => r.id)).size, 1);
    assert.equal((await milestones.list(wf)).length, 1);

    const distinct = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        (i % 2 === 0 ? milestones : other).begin(
          wf,
          { kind: 'test', phase: 'development', stepKey: `dev:1:test:${i}` },
          now,
        ),
      ),
    );
    assert.deepEqual(
      distinct.map((r) => r.sequence).sort((a, b) => a! - b!),
      [2, 3, 4, 5, 6, 7, 8, 9],
    );
  } finally {
    if (second !== database) await second.close();
  }
});

test('the index refuses a second row with one key; rows without a key never collide', async () => {
  const wf = await newWorkflow();
  const m = database.t.workflowMilestones;
  await milestones.begin(wf, { kind: 'plan', phase: 'planning', stepKey: 'plan:1' }, now);
  await assert.rejects(
    database.db.insert(m).values({ workflowId: wf, kind: 'plan', sequence: 99, stepKey: 'plan:1' }),
    (err: unknown) => isUniqueViolation(err),
  );
  await milestones.add(wf, { kind: 'feedback', phase: 'wait', status: 'completed' }, now);
  await milestones.add(wf, { kind: 'feedback', phase: 'wait', status: 'completed' }, now);
  const nulls = await database.db
    .select()
    .from(m)
    .where(and(eq(m.workflowId, wf), eq(m.kind, 'feedback')));
  assert.equal(nulls.length, 2);
  assert.ok(nulls.every((r) => r.stepKey === null));
});

test('a fork copies history without keys, so its own steps may reuse them', async () => {
  const wf = await newWorkflow();
  const plan = await milestones.begin(
    wf,
    { kind: 'plan', phase: 'planning', stepKey: 'planning:0:plan' },
    now,
  );
  await milestones.finalize(plan.id, { status: 'completed', content: 'the plan' });
  const impl = await milestones.begin(
    wf,
    { kind: 'implementation', phase: 'development', stepKey: 'development:1:implement' },
    now,
  );
  const fork = await newWorkflow();
  assert.equal(await milestones.copyHistory(wf, impl.id, fork), 2);
  const copied = await milestones.list(fork);
  assert.deepEqual(
    copied.map((r) => [r.sequence, r.kind, r.stepKey]),
    [
      [1, 'plan', null],
      [2, 'implementation', null],
    ],
  );
  // The fork's own implementation step with the same key is a new row after the copied history.
  const own = await milestones.begin(
    fork,
    { kind: 'implementation', phase: 'development', stepKey: 'development:1:implement' },
    now,
  );
  assert.equal(own.sequence, 3);
  assert.notEqual(own.id, impl.id);
  assert.ok(!copied.some((r) => r.id === own.id));
  // The source keeps its own row for the key.
  const src = await milestones.begin(
    wf,
    { kind: 'implementation', phase: 'development', stepKey: 'development:1:implement' },
    now,
  );
  assert.equal(src.id, impl.id);
});
