// Autonomous workflow records on a real migrated database (SQLite, or PostgreSQL with DATABASE_URL):
// creation of one workflow and of a batch in one transaction, tenant + owner scoped reads and the
// access decision (owner or admin; other users 403, other tenants and unknown ids 404), the
// compare-and-set status update under concurrency, milestones (sequence, finalize once, stale
// attempts interrupted, cancel-round, totals from increments, fork history), the four stable session
// lines, batch baseline / release / cancel, and deletes cascading.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { type DatabaseHandle, openDatabase } from '../../../db/client.ts';
import { batchesRepository } from '../../../db/repositories/autonomous/batches.ts';
import { milestonesRepository } from '../../../db/repositories/autonomous/milestones.ts';
import { sessionLinesRepository } from '../../../db/repositories/autonomous/session-lines.ts';
import {
  type NewWorkflow,
  stateOf,
  workflowsRepository,
} from '../../../db/repositories/autonomous/workflows.ts';
import { workflowAccess, workflowListReader } from '../../../domain/autonomous/access.ts';
import { parseDefinitionSnapshot } from '../../../domain/autonomous/create-input.ts';
import { transition } from '../../../domain/autonomous/transitions.ts';
import { upgrade } from '../../../migrations/runner.ts';
import { newWorkflowInput } from '../../support/autonomous-rows.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';

let testDb: TestDatabase;
let database: DatabaseHandle;
let workflows: ReturnType<typeof workflowsRepository>;
let milestones: ReturnType<typeof milestonesRepository>;
let lines: ReturnType<typeof sessionLinesRepository>;
let batches: ReturnType<typeof batchesRepository>;
const now = new Date('2026-03-01T10:00:00Z');

before(async () => {
  testDb = await createTestDatabase();
  database = await openDatabase({ databaseUrl: testDb.databaseUrl, sqlitePath: testDb.sqlitePath });
  await upgrade(database, 'head');
  workflows = workflowsRepository(database);
  milestones = milestonesRepository(database);
  lines = sessionLinesRepository(database);
  batches = batchesRepository(database);
});
after(async () => {
  await database.close();
  await testDb.drop();
});

const newWorkflow = (over: Partial<NewWorkflow> = {}): NewWorkflow => ({
  ...newWorkflowInput(10, 1, now, 5),
  ...over,
});

const owner = { id: 10, role: 'user', tenantId: 1 };
const sameTenantUser = { id: 11, role: 'user', tenantId: 1 };
const tenantAdmin = { id: 12, role: 'tenant_admin', tenantId: 1 };
const otherTenantAdmin = { id: 20, role: 'tenant_admin', tenantId: 2 };
const otherTenantUser = { id: 21, role: 'user', tenantId: 2 };
const platformAdmin = { id: 1, role: 'platform_admin', tenantId: 1 };
const none = new Set<string>();

test('create one workflow: pending, preparation, snapshot and engine columns stored', async () => {
  const v = newWorkflow({ model: 'claude-x', branchStrategy: 'new_branch' });
  const row = await workflows.create(v, now);
  assert.equal(row.status, 'pending');
  assert.equal(row.currentPhase, 'preparation');
  assert.equal(row.cliTool, 'cli_beta');
  assert.equal(row.model, 'claude-x');
  assert.equal(row.branchStrategy, 'new_branch');
  assert.equal(row.projectId, 5);
  assert.equal(row.retryCount, 0);
  assert.equal(row.lastTransitionAt?.getTime(), now.getTime());
  assert.equal(parseDefinitionSnapshot(row.definitionSnapshot).requirement.kind, 'text');
  assert.deepEqual(stateOf(row), {
    status: 'pending',
    phase: 'preparation',
    pausedBy: null,
    previousStatus: null,
    feedbackPhase: null,
    inBatch: false,
  });
  await assert.rejects(workflows.create({ ...v }, now), 'the same workflow id twice is refused');
});

test('access: owner and administrators of the tenant; others 403; other tenants and unknown ids 404', async () => {
  const row = await workflows.create(newWorkflow(), now);
  assert.equal(workflowAccess(owner, none, row), 'ok');
  assert.equal(workflowAccess(tenantAdmin, none, row), 'ok');
  assert.equal(workflowAccess(platformAdmin, none, row), 'ok');
  assert.equal(workflowAccess(sameTenantUser, none, row), 'forbidden');
  assert.equal(workflowAccess(sameTenantUser, new Set(['admin_access']), row), 'ok');
  assert.equal(workflowAccess(otherTenantAdmin, none, row), 'not_found');
  assert.equal(workflowAccess(otherTenantUser, none, row), 'not_found');
  assert.equal(workflowAccess(owner, none, await workflows.find('wf-unknown')), 'not_found');

  const mine = await workflows.findFor(workflowListReader(owner, none), row.workflowId);
  assert.equal(mine?.workflowId, row.workflowId);
  assert.equal(await workflows.findFor(workflowListReader(sameTenantUser, none), row.workflowId), undefined);
  assert.equal(
    await workflows.findFor(workflowListReader(otherTenantAdmin, none), row.workflowId),
    undefined,
  );
  assert.ok(await workflows.findFor(workflowListReader(tenantAdmin, none), row.workflowId));
});

test('list: scoped by tenant and, for non-administrators, by owner; filters and paging', async () => {
  await workflows.create(newWorkflow({ tenantId: 2, userId: 21 }), now);
  await workflows.create(newWorkflow({ tenantId: 2, userId: 22 }), now);
  const t2user = await workflows.list(
    workflowListReader(otherTenantUser, none),
    {},
    { limit: 50, offset: 0 },
  );
  assert.equal(t2user.total, 1);
  assert.ok(t2user.rows.every((r) => r.userId === 21 && r.tenantId === 2));
  const t2admin = await workflows.list(
    workflowListReader(otherTenantAdmin, none),
    {},
    { limit: 50, offset: 0 },
  );
  assert.equal(t2admin.total, 2);
  assert.ok(t2admin.rows.every((r) => r.tenantId === 2));
  const all = await workflows.list(workflowListReader(platformAdmin, none), {}, { limit: 1, offset: 0 });
  assert.ok(all.total >= 4);
  assert.equal(all.rows.length, 1);
  const noTenant = await workflows.list(
    workflowListReader({ id: 99, role: 'user', tenantId: null }, none),
    {},
    { limit: 50, offset: 0 },
  );
  assert.deepEqual(noTenant, { rows: [], total: 0 });
  const pending = await workflows.list(
    workflowListReader(platformAdmin, none),
    { status: 'failed' },
    { limit: 5, offset: 0 },
  );
  assert.equal(pending.total, 0);
});

test('compare-and-set: of two concurrent controls exactly one wins; state columns round-trip', async () => {
  const row = await workflows.create(newWorkflow(), now);
  const s0 = stateOf(row);
  const started = transition(s0, { type: 'start' });
  assert.ok(started.ok);
  assert.equal(await workflows.updateStatus(row.workflowId, 'pending', started.next), true);
  assert.equal(
    await workflows.updateStatus(row.workflowId, 'pending', started.next),
    false,
    'stale expectation',
  );
  const s1 = stateOf((await workflows.find(row.workflowId))!);
  const pause = transition(s1, { type: 'pause' });
  const stop = transition(s1, { type: 'stop' });
  assert.ok(pause.ok && stop.ok);
  const results = await Promise.all([
    workflows.updateStatus(row.workflowId, s1.status, pause.next),
    workflows.updateStatus(row.workflowId, s1.status, stop.next),
  ]);
  assert.deepEqual(results.filter(Boolean).length, 1, `exactly one winner: ${results}`);
  const after1 = (await workflows.find(row.workflowId))!;
  assert.ok(['paused', 'cancelled'].includes(after1.status));
  if (after1.status === 'paused') {
    assert.equal(after1.pausedBy, 'manual');
    assert.equal(after1.previousStatus, 'preparing');
    assert.deepEqual(stateOf(after1), pause.next);
  } else assert.ok(after1.completedAt instanceof Date);

  // feedback phase persists through feedback_context
  const w2 = await workflows.create(newWorkflow(), now);
  const waiting = transition(
    { ...stateOf(w2), status: 'developing', phase: 'development' },
    {
      type: 'cancel_round',
      milestonePhase: 'planning',
    },
  );
  assert.ok(waiting.ok);
  assert.equal(await workflows.updateStatus(w2.workflowId, 'pending', waiting.next), true);
  assert.deepEqual(stateOf((await workflows.find(w2.workflowId))!), waiting.next);
  assert.equal(await workflows.update(w2.workflowId, { retryCount: 2, baselineSha: 'a'.repeat(40) }), true);
  const r2 = (await workflows.find(w2.workflowId))!;
  assert.equal(r2.retryCount, 2);
  assert.equal(r2.baselineSha, 'a'.repeat(40));
  assert.equal(await workflows.update('wf-missing', { retryCount: 1 }), false);
});

test('running counts for the scheduler (global and per user)', async () => {
  const a = await workflows.create(newWorkflow({ userId: 31 }), now);
  const before = await workflows.countRunning();
  const s = transition(stateOf(a), { type: 'start' });
  assert.ok(s.ok);
  await workflows.updateStatus(a.workflowId, 'pending', s.next);
  assert.equal(await workflows.countRunning(), before + 1);
  assert.equal(await workflows.countRunning(31), 1);
  assert.equal(await workflows.countRunning(32), 0);
  assert.ok((await workflows.pending(100)).every((r) => r.status === 'pending'));
});

test('milestones: sequence, finalize once on the same row, stale attempts interrupted, totals from increments', async () => {
  const w = await workflows.create(newWorkflow(), now);
  const id = w.workflowId;
  const plan = await milestones.add(id, {
    kind: 'plan',
    phase: 'planning',
    sessionLine: 'main',
    title: 'Plan',
  });
  const review = await milestones.add(id, { kind: 'plan_review', phase: 'planning', sessionLine: 'review' });
  assert.deepEqual([plan.sequence, review.sequence], [1, 2]);
  assert.equal(plan.status, 'in_progress');
  assert.equal(plan.attempt, 1);
  assert.ok(plan.startedAt instanceof Date);
  // concurrent adds get distinct sequences
  const many = await Promise.all(
    Array.from({ length: 6 }, () => milestones.add(id, { kind: 'test', phase: 'development' })),
  );
  assert.deepEqual(
    many.map((m) => m.sequence).sort((a, b) => a! - b!),
    [3, 4, 5, 6, 7, 8],
  );

  assert.equal(
    await milestones.finalize(plan.id, {
      status: 'completed',
      content: 'the plan',
      usage: { totalTokens: 150, inputTokens: 100, outputTokens: 50, requestCount: 2 },
    }),
    true,
  );
  assert.equal(
    await milestones.finalize(plan.id, {
      status: 'failed',
      usage: { totalTokens: 1, inputTokens: 1, outputTokens: 0, requestCount: 1 },
    }),
    false,
    'a finalized row is not finalized again',
  );
  // live usage on the running verification row, then finalized on the same row
  const verify = await milestones.add(id, {
    kind: 'acceptance_verification',
    phase: 'acceptance_verification',
    sessionLine: 'verification',
    title: 'Acceptance verification running',
  });
  assert.equal(
    await milestones.addUsage(verify.id, {
      totalTokens: 30,
      inputTokens: 20,
      outputTokens: 10,
      requestCount: 1,
    }),
    true,
  );
  assert.equal(await milestones.setLiveActivity(verify.id, 'reading tests'), true);
  assert.equal(
    await milestones.finalize(verify.id, {
      status: 'completed',
      usage: { totalTokens: 12, inputTokens: 10, outputTokens: 2, requestCount: 1 },
      commitSha: 'b'.repeat(40),
      diffAdditions: 3,
      diffDeletions: 1,
      diffFiles: 2,
    }),
    true,
  );
  const v = (await milestones.find(id, verify.id))!;
  assert.equal(v.status, 'completed');
  assert.equal(v.phaseTotalTokens, 42);
  assert.equal(v.liveActivity, null);
  assert.equal(v.diffFiles, 2);
  assert.equal(
    await milestones.addUsage(verify.id, {
      totalTokens: 1,
      inputTokens: 1,
      outputTokens: 0,
      requestCount: 1,
    }),
    false,
  );

  // a second attempt of plan_review: the first (still in_progress) becomes interrupted
  await milestones.addUsage(review.id, { totalTokens: 8, inputTokens: 8, outputTokens: 0, requestCount: 1 });
  await milestones.add(id, { kind: 'plan_review', phase: 'planning', attempt: 2 });
  assert.equal(await milestones.markStaleInterrupted(id, 'plan_review', 2), 1);
  assert.equal((await milestones.find(id, review.id))!.status, 'interrupted');
  assert.equal(await milestones.markStaleInterrupted(id, 'plan_review', 2), 0);

  const totals = await milestones.recomputeTotals(id);
  // 150 (plan) + 42 (verification) + 8 (interrupted attempt: its tokens were spent)
  assert.deepEqual(totals, { totalTokens: 200, inputTokens: 138, outputTokens: 62, requestCount: 5 });
  const wr = (await workflows.find(id))!;
  assert.deepEqual([wr.totalTokens, wr.inputTokens, wr.outputTokens, wr.requestCount], [200, 138, 62, 5]);
  const listed = await milestones.list(id);
  assert.deepEqual(
    listed.map((m) => m.sequence),
    listed.map((_, i) => i + 1),
  );
  // another workflow's milestone id is not found through this workflow
  const other = await workflows.create(newWorkflow(), now);
  assert.equal(await milestones.find(other.workflowId, plan.id), undefined);
});

test('cancel-round: steps after the target milestone cancelled; fork copies the history before it', async () => {
  const w = await workflows.create(newWorkflow(), now);
  const id = w.workflowId;
  const m1 = await milestones.add(id, { kind: 'plan', phase: 'planning' });
  await milestones.finalize(m1.id, {
    status: 'completed',
    usage: { totalTokens: 10, inputTokens: 5, outputTokens: 5, requestCount: 1 },
  });
  const m2 = await milestones.add(id, { kind: 'implementation', phase: 'development' });
  await milestones.finalize(m2.id, {
    status: 'completed',
    usage: { totalTokens: 20, inputTokens: 10, outputTokens: 10, requestCount: 1 },
  });
  const m3 = await milestones.add(id, { kind: 'test', phase: 'development' });
  const m4 = await milestones.add(id, { kind: 'implementation', phase: 'development', attempt: 2 });

  const fork = await workflows.create(
    newWorkflow({ forkedFromWorkflowId: id, forkedFromMilestoneId: m2.id }),
    now,
  );
  assert.equal(await milestones.copyHistory(id, m2.id, fork.workflowId), 2);
  const forked = await milestones.list(fork.workflowId);
  assert.deepEqual(
    forked.map((m) => [m.sequence, m.kind, m.status]),
    [
      [1, 'plan', 'completed'],
      [2, 'implementation', 'completed'],
    ],
  );
  assert.equal((await milestones.recomputeTotals(fork.workflowId)).totalTokens, 30);
  const next = await milestones.add(fork.workflowId, {
    kind: 'feedback',
    phase: 'wait',
    status: 'completed',
  });
  assert.equal(next.sequence, 3);
  assert.ok(next.finishedAt instanceof Date);
  const forks = await workflows.list(
    workflowListReader(platformAdmin, none),
    { forkedFrom: id },
    { limit: 10, offset: 0 },
  );
  assert.deepEqual(
    forks.rows.map((r) => r.workflowId),
    [fork.workflowId],
  );

  assert.deepEqual(await milestones.cancelAfter(id, m2.id), [m3.id, m4.id]);
  const rows = await milestones.list(id);
  assert.deepEqual(
    rows.map((m) => [m.sequence, m.isCancelled, m.status]),
    [
      [1, false, 'completed'],
      [2, false, 'completed'],
      [3, true, 'cancelled'],
      [4, true, 'cancelled'],
    ],
  );
  assert.equal(await milestones.cancelAfter(id, 999_999), undefined);
  assert.equal(
    await milestones.cancelAfter(fork.workflowId, m1.id),
    undefined,
    'a milestone of another workflow',
  );
});

test('session lines: exactly four stable lines; bind, clear and token id', async () => {
  const w = await workflows.create(newWorkflow(), now);
  const first = await lines.ensureLines(w.workflowId, 'cli_beta');
  assert.deepEqual(
    first.map((l) => l.line),
    ['main', 'review', 'test', 'verification'],
  );
  assert.equal(new Set(first.map((l) => l.sessionId)).size, 4);
  const again = await Promise.all([
    lines.ensureLines(w.workflowId, 'cli_alpha'),
    lines.ensureLines(w.workflowId, null),
  ]);
  for (const rows of again)
    assert.deepEqual(
      rows.map((l) => l.sessionId),
      first.map((l) => l.sessionId),
      'stable ids',
    );
  assert.equal((await lines.list(w.workflowId)).length, 4);
  assert.equal(await lines.bindProviderSession(w.workflowId, 'main', 'conv-1'), true);
  assert.equal((await lines.find(w.workflowId, 'main'))!.providerSessionId, 'conv-1');
  assert.equal(await lines.clearProviderSession(w.workflowId, 'main'), true);
  assert.equal((await lines.find(w.workflowId, 'main'))!.providerSessionId, null);
  assert.equal(await lines.bindProviderSession(w.workflowId, 'main', 'conv-2'), true);
  assert.equal(
    (await lines.find(w.workflowId, 'main'))!.sessionId,
    first[0]!.sessionId,
    'rebound to the same line',
  );
  assert.equal(await lines.setProxyTokenId(w.workflowId, 'review', 'jti-abc'), true);
  assert.equal((await lines.find(w.workflowId, 'review'))!.proxyTokenId, 'jti-abc');
  assert.equal(await lines.bindProviderSession('wf-missing', 'main', 'x'), false);
  await assert.rejects(
    lines.ensureLines('wf-missing', 'cli_beta'),
    'a line needs its workflow (foreign key)',
  );
});

test('batch: one transaction, first pending and the rest queued, one baseline, release and cancel', async () => {
  const batchId = `batch-${randomUUID()}`;
  const items = [0, 1, 2].map(() => newWorkflow({ branchStrategy: 'new_branch' }));
  const { batch, workflows: rows } = await workflows.createBatch(
    { batchId, tenantId: 1, userId: 10, projectId: 5, items },
    now,
  );
  assert.equal(batch.itemCount, 3);
  assert.equal(batch.status, 'active');
  assert.deepEqual(
    rows.map((r) => [r.batchPosition, r.status, r.branchStrategy]),
    [
      [0, 'pending', 'worktree'],
      [1, 'queued', 'worktree'],
      [2, 'queued', 'worktree'],
    ],
  );
  assert.equal(stateOf(rows[0]!).inBatch, true);
  // a failing item rolls the whole batch back
  const dup = `batch-${randomUUID()}`;
  await assert.rejects(
    workflows.createBatch(
      { batchId: dup, tenantId: 1, userId: 10, projectId: 5, items: [newWorkflow(), { ...items[0]! }] },
      now,
    ),
  );
  assert.equal(await batches.find(dup), undefined, 'no batch row left behind');

  const [p1, p2] = await Promise.all([
    batches.pinBaseline(batchId, 'c'.repeat(40)),
    batches.pinBaseline(batchId, 'd'.repeat(40)),
  ]);
  assert.equal(p1, p2, 'one baseline for the whole batch');
  assert.equal(await batches.pinBaseline(batchId, 'e'.repeat(40)), p1);

  assert.equal(await batches.releaseNext(batchId), rows[1]!.workflowId);
  assert.equal((await workflows.find(rows[1]!.workflowId))!.status, 'pending');
  // stop of item 1: later not-started items cancelled
  assert.deepEqual(await batches.cancelLaterItems(batchId, 1), [rows[2]!.workflowId]);
  assert.equal((await workflows.find(rows[2]!.workflowId))!.status, 'cancelled');
  assert.equal(await batches.releaseNext(batchId), null);
  assert.equal((await workflows.find(rows[0]!.workflowId))!.status, 'pending', 'earlier items untouched');

  assert.ok(await batches.findFor(workflowListReader(owner, none), batchId));
  assert.equal(await batches.findFor(workflowListReader(sameTenantUser, none), batchId), undefined);
  assert.equal(await batches.findFor(workflowListReader(otherTenantAdmin, none), batchId), undefined);
  assert.ok(await batches.findFor(workflowListReader(tenantAdmin, none), batchId));
});

test('deletes cascade to milestones and lines; a batch delete removes its workflows', async () => {
  const w = await workflows.create(newWorkflow(), now);
  await milestones.add(w.workflowId, { kind: 'plan', phase: 'planning' });
  await lines.ensureLines(w.workflowId, 'cli_beta');
  assert.equal(await workflows.delete(w.workflowId), true);
  assert.equal(await workflows.delete(w.workflowId), false);
  assert.deepEqual(await milestones.list(w.workflowId), []);
  assert.deepEqual(await lines.list(w.workflowId), []);

  const batchId = `batch-${randomUUID()}`;
  const { workflows: rows } = await workflows.createBatch(
    { batchId, tenantId: 1, userId: 10, projectId: 5, items: [newWorkflow(), newWorkflow()] },
    now,
  );
  await milestones.add(rows[0]!.workflowId, { kind: 'plan', phase: 'planning' });
  assert.equal(await batches.delete(batchId), true);
  assert.equal(await batches.find(batchId), undefined);
  for (const r of rows) assert.equal(await workflows.find(r.workflowId), undefined);
  assert.equal(await batches.delete(batchId), false);
});
