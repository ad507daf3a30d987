// The background fetch scheduler (services/collectors/schedule.ts) on the real Temporal dev server,
// database and API: the Schedule exists with its interval when `collectors.schedule_enabled`, is
// corrected when the interval changes and deleted when disabled (also by runWorker at start);
// trigger() on it runs the same collection POST /api/fetch/data runs, over a temp copy of
// examples/transcripts/, recorded in collector_runs and shown by GET /api/fetch/status as a scheduled
// run; a tick while one runs is skipped (overlap SKIP), and a tick that finds a (manual) run going
// ends `skipped` without a second collection. Nothing waits for the interval.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { type ScheduleHandle, ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';
import { runWorker } from '../../bin/runtime.ts';
import type { RunningWorker } from '../../bin/worker-runtime.ts';
import { loadSettings } from '../../config/settings.ts';
import { TRANSCRIPT_SOURCES } from '../../domain/collectors/sources.ts';
import { collectScheduleId, ensureCollectSchedule } from '../../services/collectors/schedule.ts';
import type { ScheduledCollectResult } from '../../workflows/usage/collect-schedule.ts';
import { collectWorkflowId } from '../../workflows/usage/contract.ts';
import { buildCast, type Cast } from '../support/actors.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { api } from '../support/session.ts';

const HOST = 'scheduled-collector-host';
const root = mkdtempSync(path.join(os.tmpdir(), 'svc-collect-schedule-'));
const claudeDir = path.join(root, 'claude');
const codexDir = path.join(root, 'codex');
cpSync(path.resolve('examples/transcripts/claude'), claudeDir, { recursive: true });
cpSync(path.resolve('examples/transcripts/codex'), codexDir, { recursive: true });

let app: TestApp;
let cast: Cast;
let worker: RunningWorker | undefined;

const q = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
  app.database.sql.query<T>(text, params);
const client = () => app.deps.temporal.client();
const scheduleHandle = async () =>
  (await client()).schedule.getHandle(collectScheduleId(app.settings.TEMPORAL_TASK_QUEUE));
const ensure = (collectors: { schedule_enabled: boolean; schedule_interval_minutes: number }) =>
  ensureCollectSchedule({
    address: app.settings.TEMPORAL_ADDRESS!,
    namespace: app.settings.TEMPORAL_NAMESPACE,
    taskQueue: app.settings.TEMPORAL_TASK_QUEUE,
    collectors,
  });
const startWorker = (settings = app.settings) =>
  runWorker(
    settings,
    settings.TEMPORAL_ADDRESS!,
    app.database,
    (l) => app.logs.push(l),
    path.resolve('node_modules/.cache/svc'),
  );

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Triggers a tick once the schedule knows no earlier tick runs (it learns of a tick's end a moment
 * later), and returns the new tick's workflow. A tick's workflow id ends in its start time to the
 * second, so a new second is awaited too.
 */
async function triggerTick(h: ScheduleHandle) {
  const d = await until('the schedule to see no tick running', async () => {
    const x = await h.describe();
    return x.info.runningActions.length === 0 ? x : undefined;
  });
  const seen = new Set(d.info.recentActions.map((a) => a.action.workflow.workflowId));
  const last = Math.max(0, ...d.info.recentActions.map((a) => a.takenAt.getTime()));
  while (Math.floor(Date.now() / 1000) <= Math.floor(last / 1000))
    await new Promise((r) => setTimeout(r, 50));
  await h.trigger(ScheduleOverlapPolicy.SKIP);
  return until('the new tick', async () => {
    const x = await h.describe();
    return x.info.recentActions.find((a) => !seen.has(a.action.workflow.workflowId))?.action;
  });
}

before(async () => {
  app = await startTestApp({
    env: {
      SVC_COLLECTORS__CLAUDE_CODE_DIRS: claudeDir,
      SVC_COLLECTORS__CODEX_DIRS: codexDir,
      SVC_COLLECTORS__HOST_NAME: HOST,
      SVC_COLLECTORS__SETTLE_SECONDS: '0',
      SVC_COLLECTORS__SCHEDULE_ENABLED: 'true',
      // Once a day (at 00:00 UTC): the test triggers the schedule, it never waits for it.
      SVC_COLLECTORS__SCHEDULE_INTERVAL_MINUTES: '1440',
    },
  });
  cast = await buildCast(app);
});
after(async () => {
  await worker?.stop();
  await (await scheduleHandle()).delete().catch(() => {});
  await app?.close();
});

test('settings: off by default, every 15 minutes, interval 1..1440', () => {
  const base = { SVC_DATA_DIR: '/tmp/x' } as NodeJS.ProcessEnv;
  const d = loadSettings(base).collectors;
  assert.deepEqual([d.schedule_enabled, d.schedule_interval_minutes], [false, 15]);
  assert.equal(app.settings.collectors.schedule_enabled, true);
  assert.equal(app.settings.collectors.schedule_interval_minutes, 1440);
  for (const bad of ['0', '1441', '2.5', 'often'])
    assert.throws(
      () => loadSettings({ ...base, SVC_COLLECTORS__SCHEDULE_INTERVAL_MINUTES: bad }),
      /schedule_interval_minutes/,
      bad,
    );
});

test('the schedule exists with the interval when enabled, follows a new interval, is gone when disabled', async () => {
  assert.equal(await ensure({ schedule_enabled: true, schedule_interval_minutes: 1440 }), 'ensured');
  const h = await scheduleHandle();
  let d = await h.describe();
  assert.equal(d.spec.intervals?.[0]?.every, 1440 * 60_000);
  assert.equal(d.policies.overlap, ScheduleOverlapPolicy.SKIP);
  assert.equal(d.action.type, 'startWorkflow');
  if (d.action.type !== 'startWorkflow') return;
  assert.equal(d.action.workflowType, 'scheduledCollectWorkflow');
  assert.equal(d.action.taskQueue, app.settings.TEMPORAL_TASK_QUEUE);
  assert.deepEqual(d.action.args, [
    { trigger: 'schedule', requestedBy: null, sources: [...TRANSCRIPT_SOURCES] },
  ]);

  // A second worker's start with another interval corrects it; a pause set by an operator is kept.
  await h.pause('operator');
  assert.equal(await ensure({ schedule_enabled: true, schedule_interval_minutes: 30 }), 'ensured');
  d = await h.describe();
  assert.equal(d.spec.intervals?.[0]?.every, 30 * 60_000);
  assert.equal(d.state.paused, true);

  assert.equal(await ensure({ schedule_enabled: false, schedule_interval_minutes: 30 }), 'removed');
  await assert.rejects(h.describe(), ScheduleNotFoundError);
  assert.equal(await ensure({ schedule_enabled: false, schedule_interval_minutes: 30 }), 'absent');
});

test('trigger() runs a collection recorded as scheduled; a tick while it runs is skipped', async () => {
  assert.equal(await ensure(app.settings.collectors), 'ensured');
  const h = await scheduleHandle();
  // Paused, so the interval cannot fire on its own during the test; triggers still act.
  await h.pause('test: triggered by hand only');

  // No worker polls yet: the first tick stays running.
  await h.trigger(ScheduleOverlapPolicy.SKIP);
  const first = await until('the first tick', async () => {
    const d = await h.describe();
    return d.info.runningActions.length === 1 ? d.info.runningActions[0]! : undefined;
  });
  // The schedule's own policy: a second tick while the first runs is skipped.
  await h.trigger(ScheduleOverlapPolicy.SKIP);
  const skipped = await until('the skipped tick', async () => {
    const d = await h.describe();
    return d.info.numActionsSkippedOverlap >= 1 ? d : undefined;
  });
  assert.equal(skipped.info.numActionsSkippedOverlap, 1);
  assert.equal(skipped.info.runningActions.length, 1);
  assert.equal(skipped.info.recentActions.length, 1, 'the skipped tick started nothing');

  worker = await startWorker();
  const ran = (await (
    await client()
  ).workflow
    .getHandle(first.workflow.workflowId, first.workflow.firstExecutionRunId)
    .result()) as ScheduledCollectResult;
  assert.equal(ran.outcome, 'completed');
  assert.ok(ran.run_id);

  const rows = await q<{ run_id: string; trigger: string; requested_by: number | null }>(
    `SELECT run_id, "trigger", requested_by FROM collector_runs`,
  );
  assert.deepEqual(
    rows.map((r) => [r.run_id, r.trigger, r.requested_by]),
    [[ran.run_id, 'schedule', null]],
    'one run, recorded as scheduled',
  );

  const status = await api(app.url, 'GET', '/api/fetch/status', { auth: cast.admin });
  assert.equal(status.status, 200);
  assert.equal(status.body.running, null);
  const [run] = status.body.runs;
  assert.equal(run.run_id, ran.run_id);
  assert.equal(run.trigger, 'schedule');
  assert.equal(run.requested_by, null);
  assert.equal(run.status, 'completed');
  // The sample transcripts (docs/integrators/collectors.md "Collecting transcripts"): 12 Claude Code and 4 Codex messages.
  assert.deepEqual(
    [run.files_read, run.messages_read, run.messages_stored, run.duplicates, run.error_count],
    [3, 16, 16, 0, 0],
  );
  assert.deepEqual(
    run.sources.map((s: any) => [s.source, s.messages, s.stored]),
    [
      ['claude_code', 12, 12],
      ['codex', 4, 4],
    ],
  );
  const byTool = await q<{ tool_name: string; n: number }>(
    'SELECT tool_name, COUNT(*) AS n FROM daily_messages WHERE host_name = ? GROUP BY tool_name ORDER BY tool_name',
    [HOST],
  );
  assert.deepEqual(
    byTool.map((r) => [r.tool_name, Number(r.n)]),
    [
      ['claude_code', 12],
      ['codex', 4],
    ],
  );
  // The scheduled run is nobody's request: no audit record names a user for it.
  const [audit] = await q<{ n: number }>(
    `SELECT COUNT(*) AS n FROM audit_logs WHERE action = 'usage_collection_started'`,
  );
  assert.equal(Number(audit!.n), 0);
  // Only system administrators see the runs.
  for (const name of ['tenant_admin', 'user'] as const)
    assert.equal(
      (await api(app.url, 'GET', '/api/fetch/status', { auth: cast.actors[name].session })).status,
      403,
    );

  // The next tick (the worker polling now) reads nothing new, and is recorded too.
  const next = await triggerTick(h);
  const again = (await (
    await client()
  ).workflow
    .getHandle(next.workflow.workflowId, next.workflow.firstExecutionRunId)
    .result()) as ScheduledCollectResult;
  assert.equal(again.outcome, 'completed');
  const r2 = await api(app.url, 'GET', `/api/fetch/status?run_id=${again.run_id}`, { auth: cast.admin });
  assert.equal(r2.body.runs[0].trigger, 'schedule');
  assert.deepEqual([r2.body.runs[0].files_read, r2.body.runs[0].messages_stored], [0, 0]);
});

test('a tick that finds a run going skips it; the manual path refuses alike', async () => {
  const h = await scheduleHandle();
  const c = await client();
  // A run that stays running: started under the collection's id on a queue no worker polls.
  const going = await c.workflow.start('collectUsageWorkflow', {
    workflowId: collectWorkflowId(app.settings.TEMPORAL_TASK_QUEUE),
    taskQueue: `${app.settings.TEMPORAL_TASK_QUEUE}-idle`,
    args: [{ trigger: 'api', requestedBy: null, sources: ['claude_code'] }],
  });
  try {
    const tick = await triggerTick(h);
    const res = (await c.workflow
      .getHandle(tick.workflow.workflowId, tick.workflow.firstExecutionRunId)
      .result()) as ScheduledCollectResult;
    assert.deepEqual(res, { outcome: 'skipped', run_id: null });
    const manual = await api(app.url, 'POST', '/api/fetch/data', { auth: cast.admin });
    assert.equal(manual.status, 409);
    assert.equal(manual.body.run_id, going.firstExecutionRunId);
  } finally {
    await going.terminate('test');
  }
  const [n] = await q<{ n: number }>(`SELECT COUNT(*) AS n FROM collector_runs WHERE "trigger" = 'schedule'`);
  assert.equal(Number(n!.n), 2, 'the skipped tick recorded no run');
});

test('a worker started with the scheduler disabled deletes the schedule', async () => {
  await worker?.stop();
  worker = undefined;
  await (await scheduleHandle()).describe();
  worker = await startWorker({
    ...app.settings,
    collectors: { ...app.settings.collectors, schedule_enabled: false },
  });
  await assert.rejects((await scheduleHandle()).describe(), ScheduleNotFoundError);
});
