// The worker's maintenance schedule: created once per task queue, it refreshes the PostgreSQL
// session_stats materialized view (on SQLite the plain view is always current and the run says so).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureMaintenanceSchedules, sessionStatsScheduleId } from '../../services/maintenance-schedules.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp({ worker: true });
});
after(() => app?.close());

const sessionRows = (sessionId: string) =>
  app.database.sql.query<{ message_count: number | string; total_tokens: number | string }>(
    'SELECT message_count, total_tokens FROM session_stats WHERE agent_session_id = ?',
    [sessionId],
  );

test('the worker creates the schedule; a run refreshes session_stats on PostgreSQL', async () => {
  const client = await app.deps.temporal.client();
  const scheduleId = sessionStatsScheduleId(app.settings.TEMPORAL_TASK_QUEUE);
  const handle = client.schedule.getHandle(scheduleId);
  const described = await handle.describe();
  assert.equal(described.spec.intervals?.[0]?.every, 5 * 60_000);
  assert.equal(described.action.type, 'startWorkflow');

  const sessionId = `stats-${Date.now()}`;
  for (const [i, tokens] of [
    [1, 30],
    [2, 12],
  ] as const)
    await app.database.sql.query(
      'INSERT INTO daily_messages (date, tool_name, host_name, message_id, role, tokens_used, agent_session_id) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ['2026-11-23', 'cli_beta', 'h', `${sessionId}-${i}`, 'assistant', tokens, sessionId],
    );
  const pg = app.database.dialect === 'postgres';
  assert.equal((await sessionRows(sessionId)).length, pg ? 0 : 1, 'before a refresh');

  await handle.trigger();
  let result: string | undefined;
  for (let i = 0; i < 100 && result === undefined; i++) {
    const actions = (await handle.describe()).info.recentActions;
    const started = actions.at(-1)?.action;
    if (started) result = await client.workflow.getHandle(started.workflow.workflowId).result();
    else await sleep(100);
  }
  assert.equal(result, pg ? 'refreshed' : 'current');
  const [row] = await sessionRows(sessionId);
  assert.deepEqual([Number(row?.message_count), Number(row?.total_tokens)], [2, 42]);
});

test('a second worker start finds the schedule and only updates it', async () => {
  const opts = {
    address: app.settings.TEMPORAL_ADDRESS!,
    namespace: app.settings.TEMPORAL_NAMESPACE,
    taskQueue: app.settings.TEMPORAL_TASK_QUEUE,
    sessionStatsEveryMinutes: 7,
  };
  await ensureMaintenanceSchedules(opts);
  const client = await app.deps.temporal.client();
  const d = await client.schedule.getHandle(sessionStatsScheduleId(opts.taskQueue)).describe();
  assert.equal(d.spec.intervals?.[0]?.every, 7 * 60_000);
});
