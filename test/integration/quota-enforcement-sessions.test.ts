// Quota enforcement ends every kind of session a user over quota holds (spec rule 6, issue 26 item 6):
// one tick (services/quota-enforcement.ts enforceOnce, the activity's whole body, run here directly
// with stand-ins for the Temporal side) terminates the user's live workspace sessions
// (POST /api/sessions), which then take no message, and signals their running autonomous workflows
// to pause by quota; a user within quota keeps both, and a second tick finds nothing more to end.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Trigger } from '../../domain/autonomous/transitions.ts';
import { quotaEnforcement } from '../../services/quota-enforcement.ts';
import { buildCast, type Cast } from '../support/actors.ts';
import { workflowRowIn } from '../support/autonomous-rows.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { setUserQuota, uploadRequests } from '../support/quota.ts';
import { api, type Session } from '../support/session.ts';

let app: TestApp;

async function openSession(who: Session): Promise<string> {
  const r = await api(app.url, 'POST', '/api/sessions', { auth: who, body: { tool_name: 'cli_quota' } });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.session.session_id;
}

const statusOf = async (who: Session, id: string) =>
  (await api(app.url, 'GET', `/api/sessions/${id}`, { auth: who })).body.session.status;

const workflowOf = (userId: number, tenantId: number, triggers: Trigger[]) =>
  workflowRowIn(app.database, userId, tenantId, triggers);

test('a user over quota: workspace sessions terminated, autonomous workflows paused by quota', async (t) => {
  app = await startTestApp();
  t.after(() => app.close());
  const cast: Cast = await buildCast(app);
  const over = cast.actors.user.session!;
  const within = cast.actors.manager.session!;
  const overSession = await openSession(over);
  const withinSession = await openSession(within);
  const running = await workflowOf(over.user.id, cast.tenantA, [{ type: 'start' }]);
  await workflowOf(over.user.id, cast.tenantA, [{ type: 'start' }, { type: 'pause' }]);
  await workflowOf(within.user.id, cast.tenantA, [{ type: 'start' }]);

  await setUserQuota(app, cast.admin, over.user.id, { daily_request_quota: 2 });
  await setUserQuota(app, cast.admin, within.user.id, { daily_request_quota: 100 });
  await uploadRequests(app, over.user.username, 2);
  await uploadRequests(app, within.user.username, 2);

  const signalled: string[] = [];
  const tick = quotaEnforcement({
    database: app.database,
    settings: app.settings,
    now: () => new Date(),
    logger: { warn: () => {} },
    stopper: { stopNow: async () => undefined },
    pauser: { pauseForQuota: async (id) => signalled.push(id) },
    audit: async () => {},
  });
  const first = await tick.enforceOnce();
  assert.deepEqual(first.usersOverQuota, [over.user.id]);
  assert.deepEqual(first.workspaceSessionsTerminated, [overSession]);
  assert.deepEqual(first.autonomousPaused, [running]);
  assert.deepEqual(signalled, [running], 'only the running workflow of the user over quota');

  assert.equal(await statusOf(over, overSession), 'terminated');
  const refused = await api(app.url, 'POST', `/api/sessions/${overSession}/messages`, {
    auth: over,
    body: { role: 'user', content: 'more' },
  });
  assert.equal(refused.status, 409, JSON.stringify(refused.body));
  assert.equal(await statusOf(within, withinSession), 'active', 'a user within quota keeps the session');

  // The row is still `running` here (no Temporal workflow applies the signal): the next tick signals
  // it again, and ends no session twice.
  const second = await tick.enforceOnce();
  assert.deepEqual(second.workspaceSessionsTerminated, []);
});
