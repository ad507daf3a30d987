// Scheduling slots of autonomous workflows on a real migrated database (SQLite, or PostgreSQL with
// DATABASE_URL): the claim activity (activities/autonomous/scheduling.ts claimAutonomousSlot over
// db/repositories/autonomous/slots.ts) starts a `pending` workflow with the state `transition(start)`
// gave it only while the global `agent_max_concurrent_workflows` (re-read from settings on every call,
// and from the data directory's config file when it changed: config/live-settings.ts)
// and the owner's tenant `max_sessions_per_user` have room; anything not pending is left alone; and
// concurrent claims, from one database handle or two (two workers), never pass either limit.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import { inArray } from 'drizzle-orm';
import { createAutonomousSchedulingActivities } from '../../../activities/autonomous/scheduling.ts';
import { refreshLiveSettings } from '../../../config/live-settings.ts';
import { loadSettings, type Settings } from '../../../config/settings.ts';
import { type DatabaseHandle, openDatabase } from '../../../db/client.ts';
import { slotsRepository } from '../../../db/repositories/autonomous/slots.ts';
import {
  type NewWorkflow,
  stateOf,
  workflowsRepository,
} from '../../../db/repositories/autonomous/workflows.ts';
import { tenantsRepository } from '../../../db/repositories/tenants.ts';
import { usersRepository } from '../../../db/repositories/users.ts';
import { RUNNING_STATUSES } from '../../../domain/autonomous/states.ts';
import { transition, type WorkflowState } from '../../../domain/autonomous/transitions.ts';
import { upgrade } from '../../../migrations/runner.ts';
import { newWorkflowInput } from '../../support/autonomous-rows.ts';
import { createTestDatabase, type TestDatabase, usingPostgres } from '../../support/database.ts';

let testDb: TestDatabase;
let database: DatabaseHandle;
let settings: Settings;
let activities: ReturnType<typeof createAutonomousSchedulingActivities>;
let workflows: ReturnType<typeof workflowsRepository>;
const clock = { at: new Date('2026-03-01T10:00:00Z') };
const now = () => clock.at;

let tenantA: number;
let tenantB: number;
/** In tenant A (max_sessions_per_user 2 below). */
let alice: number;
let bob: number;
/** In tenant B, whose quota row keeps the spec default (5). */
let carol: number;
/** Outside any tenant: only the global limit. */
let loner: number;

before(async () => {
  testDb = await createTestDatabase();
  database = await openDatabase({ databaseUrl: testDb.databaseUrl, sqlitePath: testDb.sqlitePath });
  await upgrade(database, 'head');
  settings = loadSettings({
    SVC_DATA_DIR: testDb.dataDir,
    DATABASE_URL: testDb.databaseUrl ?? '',
    SVC_ENCRYPTION_KEY: 'test-encryption-key',
    SECRET_KEY: 'test-secret-key',
  });
  activities = createAutonomousSchedulingActivities({ database, settings, now });
  workflows = workflowsRepository(database);
  const tenants = tenantsRepository(database);
  const users = usersRepository(database);
  const tenant = async (name: string) =>
    (
      await tenants.create(
        {
          name,
          slug: `${name.toLowerCase().replace(' ', '-')}-${randomUUID()}`,
          plan: 'standard',
          status: 'active',
          contactEmail: null,
          contactName: null,
          trialEndsAt: null,
        },
        clock.at,
      )
    ).id;
  tenantA = await tenant('Slots A');
  tenantB = await tenant('Slots B');
  await tenants.putQuota(tenantA, { maxSessionsPerUser: 2 }, clock.at);
  const user = async (name: string, tenantId: number | null) =>
    (await users.create({ username: `${name}-${randomUUID()}`, passwordHash: 'x', tenantId })).id;
  alice = await user('alice', tenantA);
  bob = await user('bob', tenantA);
  carol = await user('carol', tenantB);
  loner = await user('loner', null);
});
after(async () => {
  await database.close();
  await testDb.drop();
});

/** Each test starts from no running workflow (earlier tests' rows are moved out of the way). */
beforeEach(async () => {
  const w = database.t.autonomousWorkflows;
  await database.db
    .update(w)
    .set({ status: 'completed' })
    .where(inArray(w.status, [...RUNNING_STATUSES, 'pending']));
  settings.autonomous.agent_max_concurrent_workflows = undefined;
  settings.autonomous.max_concurrent_workflows = undefined;
});

const newWorkflow = (userId: number, tenantId: number | null): NewWorkflow =>
  newWorkflowInput(userId, tenantId, clock.at);

/** A pending workflow and the state `start` moves it to. */
async function pending(userId: number, tenantId: number | null) {
  const row = await workflows.create(newWorkflow(userId, tenantId), clock.at);
  const t = transition(stateOf(row), { type: 'start' });
  assert.ok(t.ok);
  return { workflowId: row.workflowId, next: t.next as WorkflowState };
}

const claim = (p: { workflowId: string; next: WorkflowState }) => activities.claimAutonomousSlot(p);

test('a claim with room writes the start state like updateStatus, with started_at and phase_started_at', async () => {
  const p = await pending(alice, tenantA);
  clock.at = new Date('2026-03-01T10:05:00Z');
  const r = await claim(p);
  assert.deepEqual(r, { outcome: 'started', status: 'preparing' });
  const row = (await workflows.find(p.workflowId))!;
  assert.equal(row.status, 'preparing');
  assert.equal(row.currentPhase, 'preparation');
  assert.equal(row.pausedBy, null);
  assert.equal(row.startedAt?.getTime(), clock.at.getTime());
  assert.equal(row.phaseStartedAt?.getTime(), clock.at.getTime());
  assert.equal(row.lastTransitionAt?.getTime(), clock.at.getTime());
  assert.equal(row.updatedAt?.getTime(), clock.at.getTime());

  // A second claim of the same workflow (a retried activity) changes nothing and says why.
  clock.at = new Date('2026-03-01T10:06:00Z');
  const again = await claim(p);
  assert.equal(again.outcome, 'not_pending');
  assert.equal(again.status, 'preparing');
  assert.match(again.reason ?? '', /preparing/);
  assert.equal(
    (await workflows.find(p.workflowId))!.phaseStartedAt?.getTime(),
    Date.parse('2026-03-01T10:05:00Z'),
  );
});

test('a restart keeps the first started_at; queued, paused and deleted rows are not_pending', async () => {
  const p = await pending(alice, tenantA);
  const first = new Date('2026-03-01T09:00:00Z');
  await workflows.update(p.workflowId, { startedAt: first });
  clock.at = new Date('2026-03-01T11:00:00Z');
  assert.equal((await claim(p)).outcome, 'started');
  const row = (await workflows.find(p.workflowId))!;
  assert.equal(row.startedAt?.getTime(), first.getTime());
  assert.equal(row.phaseStartedAt?.getTime(), clock.at.getTime());

  const q = await pending(bob, tenantA);
  await workflows.updateStatus(q.workflowId, 'pending', {
    ...q.next,
    status: 'queued',
    phase: 'preparation',
  });
  assert.deepEqual(
    { ...(await claim(q)), reason: undefined },
    { outcome: 'not_pending', status: 'queued', reason: undefined },
  );
  assert.equal((await workflows.find(q.workflowId))!.status, 'queued');

  const gone = await pending(bob, tenantA);
  await workflows.delete(gone.workflowId);
  const r = await claim(gone);
  assert.equal(r.outcome, 'not_pending');
  assert.equal(r.status, 'deleted');
});

test('a claim must start a running status', async () => {
  const p = await pending(alice, tenantA);
  await assert.rejects(claim({ workflowId: p.workflowId, next: { ...p.next, status: 'paused' } }), /running/);
  assert.equal((await workflows.find(p.workflowId))!.status, 'pending');
});

test('per-user limit: the tenant max_sessions_per_user counts the user own running workflows only', async () => {
  const a = [await pending(alice, tenantA), await pending(alice, tenantA), await pending(alice, tenantA)];
  assert.equal((await claim(a[0]!)).outcome, 'started');
  assert.equal((await claim(a[1]!)).outcome, 'started');
  const full = await claim(a[2]!);
  assert.equal(full.outcome, 'full');
  assert.equal(full.status, 'pending');
  assert.match(full.reason ?? '', /max_sessions_per_user 2/);
  assert.equal((await workflows.find(a[2]!.workflowId))!.status, 'pending');

  // Another user of the same tenant has their own two slots.
  assert.equal((await claim(await pending(bob, tenantA))).outcome, 'started');

  // A running workflow that pauses frees its slot; the waiting one then starts.
  const paused = transition({ ...a[0]!.next }, { type: 'pause' });
  assert.ok(paused.ok);
  assert.ok(await workflows.updateStatus(a[0]!.workflowId, 'preparing', paused.next));
  assert.equal((await claim(a[2]!)).outcome, 'started');

  // Raising the tenant's limit applies to the next claim.
  const extra = await pending(alice, tenantA);
  assert.equal((await claim(extra)).outcome, 'full');
  await tenantsRepository(database).putQuota(tenantA, { maxSessionsPerUser: 3 }, clock.at);
  assert.equal((await claim(extra)).outcome, 'started');
  await tenantsRepository(database).putQuota(tenantA, { maxSessionsPerUser: 2 }, clock.at);
});

test('per-user limit defaults to the spec 5 with a tenant without quota row; none without a tenant', async () => {
  await database.db
    .delete(database.t.tenantQuotas)
    .where(inArray(database.t.tenantQuotas.tenantId, [tenantB]));
  const c = [];
  for (let i = 0; i < 6; i++) c.push(await pending(carol, tenantB));
  for (let i = 0; i < 5; i++) assert.equal((await claim(c[i]!)).outcome, 'started', `carol ${i}`);
  const sixth = await claim(c[5]!);
  assert.equal(sixth.outcome, 'full');
  assert.match(sixth.reason ?? '', /max_sessions_per_user 5/);
  await completeRunning();

  // A user outside any tenant: only the global limit (10 by default).
  const l = [];
  for (let i = 0; i < 11; i++) l.push(await pending(loner, null));
  for (let i = 0; i < 10; i++) assert.equal((await claim(l[i]!)).outcome, 'started', `loner ${i}`);
  const eleventh = await claim(l[10]!);
  assert.equal(eleventh.outcome, 'full');
  assert.match(eleventh.reason ?? '', /agent_max_concurrent_workflows 10/);
});

test('the user current tenant decides the per-user limit; the workflow tenant when the user has none', async () => {
  // Bob is in tenant A (limit 2), his workflows carry tenant B (default 5 if used): A's limit applies.
  const b = [await pending(bob, tenantB), await pending(bob, tenantB), await pending(bob, tenantB)];
  assert.equal((await claim(b[0]!)).outcome, 'started');
  assert.equal((await claim(b[1]!)).outcome, 'started');
  assert.match((await claim(b[2]!)).reason ?? '', /max_sessions_per_user 2/);
  await completeRunning();
  // The loner (no tenant) with workflows carrying tenant A: tenant A's limit applies.
  const l = [await pending(loner, tenantA), await pending(loner, tenantA), await pending(loner, tenantA)];
  assert.equal((await claim(l[0]!)).outcome, 'started');
  assert.equal((await claim(l[1]!)).outcome, 'started');
  assert.match((await claim(l[2]!)).reason ?? '', /max_sessions_per_user 2/);
});

test('the global limit is read from settings on every call', async () => {
  settings.autonomous.agent_max_concurrent_workflows = 2;
  const l = [await pending(loner, null), await pending(carol, tenantB), await pending(alice, tenantA)];
  assert.equal((await claim(l[0]!)).outcome, 'started');
  assert.equal((await claim(l[1]!)).outcome, 'started');
  const full = await claim(l[2]!);
  assert.equal(full.outcome, 'full');
  assert.match(full.reason ?? '', /global limit reached: 2 of agent_max_concurrent_workflows 2/);
  settings.autonomous.agent_max_concurrent_workflows = 3;
  assert.equal((await claim(l[2]!)).outcome, 'started');
  // The deprecated alias is honoured when the new name is unset.
  settings.autonomous.agent_max_concurrent_workflows = undefined;
  settings.autonomous.max_concurrent_workflows = 3;
  assert.equal((await claim(await pending(loner, null))).outcome, 'full');
});

test('the global limit is re-read from the config file each scheduling cycle; a bad file keeps the last good value', async () => {
  const file = path.join(settings.dataDir, 'config.json');
  // As a deployment tool writes it: a new file renamed over the old one.
  const write = (content: string) => {
    writeFileSync(`${file}.new`, content);
    renameSync(`${file}.new`, file);
  };
  const limit = (n: number) => JSON.stringify({ autonomous: { agent_max_concurrent_workflows: n } });
  try {
    write(limit(2));
    const l = [await pending(loner, null), await pending(carol, tenantB), await pending(alice, tenantA)];
    assert.equal((await claim(l[0]!)).outcome, 'started');
    assert.equal((await claim(l[1]!)).outcome, 'started');
    assert.match((await claim(l[2]!)).reason ?? '', /2 of agent_max_concurrent_workflows 2/);
    write(limit(3));
    assert.equal((await claim(l[2]!)).outcome, 'started', 'the next cycle applies the new limit');
    write('{"autonomous": {"agent_max_concurrent_workflows": ');
    const next = await pending(loner, null);
    assert.match((await claim(next)).reason ?? '', /3 of agent_max_concurrent_workflows 3/);
    write(limit(0)); // invalid (1 to 1000): refused too
    assert.match((await claim(next)).reason ?? '', /3 of agent_max_concurrent_workflows 3/);
    write(limit(4));
    assert.equal((await claim(next)).outcome, 'started');
  } finally {
    rmSync(file, { force: true });
    refreshLiveSettings(settings, () => undefined); // no file again: the defaults
  }
  assert.equal(settings.autonomous.agent_max_concurrent_workflows, undefined);
});

test('concurrent claims never pass the global limit, from one handle or two', async () => {
  settings.autonomous.agent_max_concurrent_workflows = 4;
  // PostgreSQL: a second pool, as a second worker would have. SQLite: two handles in one process
  // would block each other's synchronous busy wait, so the second is the same handle (its
  // transactions queue; other processes are held off by BEGIN IMMEDIATE's write lock).
  const second = usingPostgres()
    ? await openDatabase({ databaseUrl: testDb.databaseUrl, sqlitePath: testDb.sqlitePath })
    : database;
  try {
    const other = createAutonomousSchedulingActivities({ database: second, settings, now });
    const ps = [];
    for (let i = 0; i < 24; i++) ps.push(await pending(loner, null));
    const results = await Promise.all(
      ps.map((p, i) => (i % 2 === 0 ? activities : other).claimAutonomousSlot(p)),
    );
    assert.equal(results.filter((r) => r.outcome === 'started').length, 4);
    assert.equal(results.filter((r) => r.outcome === 'full').length, 20);
    assert.equal(await workflows.countRunning(), 4);
  } finally {
    if (second !== database) await second.close();
  }
});

test('concurrent claims of one user never pass the per-user limit', async () => {
  const ps = [];
  for (let i = 0; i < 12; i++) ps.push(await pending(alice, tenantA));
  const results = await Promise.all(ps.map((p) => claim(p)));
  assert.equal(results.filter((r) => r.outcome === 'started').length, 2);
  assert.equal(await workflows.countRunning(alice), 2);
  assert.ok(
    results.filter((r) => r.outcome === 'full').every((r) => /max_sessions_per_user/.test(r.reason!)),
  );
});

test('concurrent claims of one workflow start it once', async () => {
  const p = await pending(carol, tenantB);
  const results = await Promise.all(Array.from({ length: 8 }, () => claim(p)));
  assert.equal(results.filter((r) => r.outcome === 'started').length, 1);
  assert.ok(results.filter((r) => r.outcome !== 'started').every((r) => r.outcome === 'not_pending'));
});

test('pausedForQuota lists only paused (quota) rows', async () => {
  const slots = slotsRepository(database);
  const q = await pending(alice, tenantA);
  const m = await pending(bob, tenantA);
  assert.equal((await claim(q)).outcome, 'started');
  assert.equal((await claim(m)).outcome, 'started');
  const byQuota = transition(q.next, { type: 'app_quota_exceeded' });
  const byHand = transition(m.next, { type: 'pause' });
  assert.ok(byQuota.ok && byHand.ok);
  assert.ok(await workflows.updateStatus(q.workflowId, 'preparing', byQuota.next));
  assert.ok(await workflows.updateStatus(m.workflowId, 'preparing', byHand.next));
  const listed = (await slots.pausedForQuota()).map((r) => r.workflowId);
  assert.ok(listed.includes(q.workflowId));
  assert.ok(!listed.includes(m.workflowId));
});

async function completeRunning(): Promise<void> {
  const w = database.t.autonomousWorkflows;
  await database.db
    .update(w)
    .set({ status: 'completed' })
    .where(inArray(w.status, [...RUNNING_STATUSES]));
}
