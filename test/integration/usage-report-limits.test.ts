// POST /api/remote/usage-report under attack and in real use (issue 8 item 4, issue 25 item 3): only the
// agent's own credentials for a session on its machine (a proxy token 401, another machine's agent 403),
// bounds per report (400 naming the field), a per-session rate limit kept in the database (429 +
// Retry-After), reports only for remote sessions started on their current machine, counted within the
// quota left of the session's user and tenant (never beyond); and the real agent reporting the usage
// its CLI printed, counted towards quotas only when the CLI's credential bypassed the proxy.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { dayKey } from '../../domain/quota.ts';
import { createTenant } from '../support/actors.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { setUserQuota } from '../support/quota.ts';
import {
  agentMessage,
  assign,
  buildRemoteCast,
  type FakeMachine,
  type Person,
  person,
  type RemoteCast,
  registerBody,
  registerFakeMachine,
  registrationToken,
  scriptedAgent,
  startAgent,
  waitUntil,
} from '../support/remote.ts';
import { api } from '../support/session.ts';

const PER_MINUTE = 5;
let app: TestApp;
let cast: RemoteCast;

before(async () => {
  app = await startTestApp({
    worker: true,
    env: { SVC_REMOTE__USAGE_REPORTS_PER_MINUTE: String(PER_MINUTE) },
  });
  cast = await buildRemoteCast(app);
});
after(async () => {
  await app?.close();
});

interface Started {
  sessionId: string;
  token: string;
  machine: FakeMachine;
}
/** A report of the session sent with its machine's agent credentials (or `as` another machine's). */
const report = (s: Started, body: Record<string, unknown>, as: FakeMachine = s.machine) =>
  api(app.url, 'POST', '/api/remote/usage-report', {
    headers: as.headers,
    body: { session_id: s.sessionId, ...body },
  });

/** A report of usage that bypassed the proxy (it counts towards quotas). */
const direct = (s: Started, reportId: string, fields: Record<string, unknown>) =>
  report(s, { report_id: reportId, via_proxy: false, ...fields });

/** A session of `user` on a scripted machine, started there; its proxy token from the start command. */
async function startedSession(user: Person = cast.userA, tenantId = cast.tenantId): Promise<Started> {
  const machine = await registerFakeMachine(app.url, cast.admin.session, tenantId);
  await assign(app.url, cast.admin.session, machine.machineId, user.id, 'user');
  const agent = scriptedAgent(app.url, machine);
  try {
    await agentMessage(app.url, machine);
    const created = await api(app.url, 'POST', '/api/remote/sessions', {
      auth: user.session,
      body: { machine_id: machine.machineId, project_path: '/tmp' },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const start = await waitUntil('session.start delivered', async () =>
      agent.received.find(
        (c) => c.command_type === 'session.start' && c.session_id === created.body.session_id,
      ),
    );
    return { sessionId: created.body.session_id, token: start.payload.proxy_token, machine };
  } finally {
    await agent.stop();
  }
}

async function usedToday(userId: number) {
  const { db, t } = app.database;
  const rows = await db.select().from(t.quotaUsage).where(eq(t.quotaUsage.userId, userId));
  return rows.find((r) => r.period === 'daily' && r.date === dayKey(app.clock.now()));
}

test("agent credentials only: a proxy token 401, another machine's agent 403; de-duplicated, counted only when it bypassed the proxy", async () => {
  const s = await startedSession();
  const other = await startedSession();
  assert.equal(
    (await api(app.url, 'POST', '/api/remote/usage-report', { body: { report_id: 'x' } })).status,
    401,
  );
  // The session's own proxy token (which its CLI holds) is no credential for reports.
  const byProxyToken = await api(app.url, 'POST', '/api/remote/usage-report', {
    headers: { authorization: `Bearer ${s.token}` },
    body: { report_id: 'p', session_id: s.sessionId, input_tokens: 5, via_proxy: false },
  });
  assert.equal(byProxyToken.status, 401);
  const byProxyWithMachine = await api(app.url, 'POST', '/api/remote/usage-report', {
    headers: { authorization: `Bearer ${s.token}`, 'x-machine-id': s.machine.machineId },
    body: { report_id: 'p', session_id: s.sessionId, input_tokens: 5, via_proxy: false },
  });
  assert.equal(byProxyWithMachine.status, 401);
  // Another machine's agent (a valid agent token) reporting for this session.
  const foreignAgent = await report(s, { report_id: 'f', input_tokens: 5, via_proxy: false }, other.machine);
  assert.equal(foreignAgent.status, 403);
  assert.equal(foreignAgent.body.error, 'The session does not run on this machine');

  const before = (await usedToday(cast.userA.id))?.tokensUsed ?? 0;
  const first = await report(s, { report_id: 'r-1', input_tokens: 100, output_tokens: 50, model: 'm1' });
  assert.equal(first.status, 201, JSON.stringify(first.body));
  assert.equal(first.body.counted, false);
  const again = await report(s, { report_id: 'r-1', input_tokens: 100, output_tokens: 50 });
  assert.equal(again.status, 200);
  assert.equal(again.body.duplicate, true);
  const direct = await report(s, { report_id: 'r-2', input_tokens: 40, output_tokens: 2, via_proxy: false });
  assert.equal(direct.status, 201);
  assert.equal(direct.body.counted, true);
  assert.equal(direct.body.counted_tokens, 42);
  assert.equal(direct.body.refused_tokens, 0);
  const dup = await report(s, { report_id: 'r-2', input_tokens: 40, output_tokens: 2, via_proxy: false });
  assert.equal(dup.body.duplicate, true);
  assert.equal((await usedToday(cast.userA.id))!.tokensUsed - before, 42, 'counted once');
  const { db, t } = app.database;
  const rows = await db.select().from(t.usageReports).where(eq(t.usageReports.sessionId, s.sessionId));
  assert.equal(rows.length, 2);
});

test('bounds: non-negative integers, at most 200k tokens and 100 requests per report, 400 naming the field', async () => {
  const s = await startedSession();
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ input_tokens: 2 ** 53 }, /^input_tokens: /],
    [{ input_tokens: 200_001 }, /^input_tokens: /],
    [{ output_tokens: 200_001 }, /^output_tokens: /],
    [{ cache_tokens: 200_001 }, /^cache_tokens: /],
    [{ total_tokens: 200_001 }, /^total_tokens: /],
    [{ input_tokens: 120_000, output_tokens: 120_000 }, /^total_tokens: must be at most 200000/],
    [{ requests: 101 }, /^requests: /],
    [{ input_tokens: -1 }, /^input_tokens: must not be negative/],
    [{ output_tokens: 1.5 }, /^output_tokens: must be an integer/],
    [{ input_tokens: '5' }, /^input_tokens: /],
    [{ session_id: undefined }, /^session_id: /],
  ];
  for (const [fields, message] of cases) {
    const r = await report(s, { report_id: randomUUID(), via_proxy: false, ...fields });
    assert.equal(r.status, 400, JSON.stringify(fields));
    assert.match(r.body.error, message);
  }
  const before = (await usedToday(cast.userA.id))?.tokensUsed ?? 0;
  const atLimit = await direct(s, 'max', { input_tokens: 200_000, requests: 100 });
  assert.equal(atLimit.status, 201, JSON.stringify(atLimit.body));
  const u = await usedToday(cast.userA.id);
  assert.equal(u!.tokensUsed - before, 200_000, 'only the accepted report counted');
});

test("one over-large report cannot use up the tenant's daily quota: clipped to what is left, the rest refused", async () => {
  const tenantId = await createTenant(app, cast.admin.session);
  const alice = await person(app, cast.admin.session, 'user', tenantId);
  const bob = await person(app, cast.admin.session, 'user', tenantId);
  const put = await api(app.url, 'PUT', `/api/tenants/${tenantId}/quota`, {
    auth: cast.admin.session,
    body: { daily_token_limit: 250_000, daily_request_limit: 1000 },
  });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  const a = await startedSession(alice, tenantId);
  const b = await startedSession(bob, tenantId);
  const tenantUsed = async () => {
    const [row] = await app.database.sql.query<{ tokens_used: number }>(
      'SELECT tokens_used FROM tenant_usage WHERE tenant_id = ? AND date = ?',
      [tenantId, dayKey(app.clock.now())],
    );
    return Number(row?.tokens_used ?? 0);
  };
  // The largest report allowed (200k of the tenant's 250k) counts whole.
  const big = await direct(a, 'big', { input_tokens: 150_000, output_tokens: 50_000 });
  assert.equal(big.status, 201, JSON.stringify(big.body));
  assert.deepEqual(
    [big.body.counted_tokens, big.body.refused_tokens, big.body.counted_requests],
    [200_000, 0, 1],
  );
  // The next one of another user of the tenant is clipped to the 50k left.
  const clipped = await direct(b, 'next', { input_tokens: 120_000, output_tokens: 80_000 });
  assert.equal(clipped.status, 201, JSON.stringify(clipped.body));
  assert.equal(clipped.body.counted, true);
  assert.equal(clipped.body.counted_tokens, 50_000);
  assert.equal(clipped.body.refused_tokens, 150_000);
  assert.equal(clipped.body.refused_reason, 'quota');
  assert.equal(await tenantUsed(), 250_000, 'the tenant is charged exactly up to its limit');
  assert.equal((await usedToday(bob.id))!.tokensUsed, 50_000, "charged to the session's user");
  // Nothing is left: a further report counts nothing.
  const none = await report(a, { report_id: 'more', input_tokens: 10, via_proxy: false });
  assert.equal(none.status, 201);
  assert.deepEqual([none.body.counted, none.body.counted_tokens, none.body.refused_tokens], [false, 0, 10]);
  assert.equal(await tenantUsed(), 250_000);

  // A user's personal quota bounds it too (2 requests a day: the third and later are refused).
  const tenant2 = await createTenant(app, cast.admin.session);
  const carol = await person(app, cast.admin.session, 'user', tenant2);
  await setUserQuota(app, cast.admin.session, carol.id, { daily_request_quota: 2 });
  const c = await startedSession(carol, tenant2);
  const r1 = await report(c, { report_id: 'c1', input_tokens: 10, requests: 5, via_proxy: false });
  assert.deepEqual([r1.body.counted_requests, r1.body.refused_requests], [2, 3]);
  const r2 = await report(c, { report_id: 'c2', input_tokens: 10, via_proxy: false });
  assert.deepEqual([r2.body.counted_tokens, r2.body.refused_tokens, r2.body.refused_requests], [0, 10, 1]);
  assert.equal((await usedToday(carol.id))!.requestsUsed, 2);
});

test('rate limit per session, counted in the database: 429 with Retry-After, other sessions unaffected', async () => {
  const s = await startedSession();
  const other = await startedSession();
  const sent = await Promise.all(
    Array.from({ length: PER_MINUTE + 3 }, (_, i) =>
      report(s, { report_id: `burst-${i}`, input_tokens: 1, output_tokens: 1 }),
    ),
  );
  const accepted = sent.filter((r) => r.status === 201).length;
  const limited = sent.filter((r) => r.status === 429);
  assert.equal(accepted, PER_MINUTE, 'concurrent reports cannot slip past the limit');
  assert.equal(limited.length, 3);
  assert.equal(
    limited[0]!.body.error,
    `At most ${PER_MINUTE} usage reports per session per minute; retry later`,
  );
  const retryAfter = Number(limited[0]!.res.headers.get('retry-after'));
  assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
  const { db, t } = app.database;
  const rows = await db.select().from(t.usageReports).where(eq(t.usageReports.sessionId, s.sessionId));
  assert.equal(rows.length, PER_MINUTE, 'refused reports are not kept');
  assert.equal((await report(other, { report_id: 'o-1', input_tokens: 1 })).status, 201);
  app.clock.advance(61_000);
  assert.equal((await report(s, { report_id: 'later', input_tokens: 1 })).status, 201, 'a minute later');
});

test('only sessions whose CLI was started on their current machine may report', async () => {
  const { db, t } = app.database;
  const machine = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  const as = (sessionId: string, m: FakeMachine = machine): Started => ({ sessionId, token: '', machine: m });
  // A local session (not remote).
  const localId = randomUUID();
  await db.insert(t.agentSessions).values({
    sessionId: localId,
    tenantId: cast.tenantId,
    toolName: 'cli_alpha',
    userId: cast.userA.id,
    status: 'active',
  });
  const local = await report(as(localId), { report_id: 'l', input_tokens: 5, via_proxy: false });
  assert.equal(local.status, 403);
  assert.equal(local.body.error, 'Usage reports are accepted only for remote sessions');

  // A remote session whose start command no agent has claimed yet.
  await assign(app.url, cast.admin.session, machine.machineId, cast.userA.id, 'user');
  await agentMessage(app.url, machine);
  const created = await api(app.url, 'POST', '/api/remote/sessions', {
    auth: cast.userA.session,
    body: { machine_id: machine.machineId, project_path: '/tmp' },
  });
  assert.equal(created.status, 201);
  const pending = await report(as(created.body.session_id), {
    report_id: 'p',
    input_tokens: 5,
    via_proxy: false,
  });
  assert.equal(pending.status, 403);
  assert.equal(
    pending.body.error,
    'The session has not been started on its machine; there is no usage to report',
  );

  // Started, but the report names another machine.
  const s = await startedSession();
  const foreign = await report(s, { report_id: 'f', input_tokens: 5, machine_id: machine.machineId });
  assert.equal(foreign.status, 403);
  // The machine is deleted and its id registered again: the session belongs to the old generation.
  await api(app.url, 'DELETE', `/api/remote/machines/${s.machine.machineId}`, { auth: cast.admin.session });
  const gone = await report(s, { report_id: 'g', input_tokens: 5, via_proxy: false });
  assert.equal(gone.status, 401, "the deleted machine's agent token is no credential");
  const again = await api(app.url, 'POST', '/api/remote/agent/register', {
    body: registerBody(
      await registrationToken(app.url, cast.admin.session, cast.tenantId),
      s.machine.machineId,
    ),
  });
  assert.equal(again.status, 201, JSON.stringify(again.body));
  const reborn: FakeMachine = {
    machineId: s.machine.machineId,
    agentToken: again.body.agent_token,
    headers: { authorization: `Bearer ${again.body.agent_token}`, 'x-machine-id': s.machine.machineId },
  };
  await db
    .update(t.agentSessions)
    .set({ status: 'active' })
    .where(eq(t.agentSessions.sessionId, s.sessionId));
  const orphan = await report(as(s.sessionId, reborn), { report_id: 'o', input_tokens: 5, via_proxy: false });
  assert.equal(orphan.status, 403);
  const audits = await db.select().from(t.auditLogs).where(eq(t.auditLogs.action, 'REMOTE_USAGE_REPORT'));
  assert.ok(audits.filter((a) => !a.success).length >= 4, 'refusals are audited');
});

test('the agent reports the usage its CLI printed; counted only when the CLI bypassed the proxy', async () => {
  const { db, t } = app.database;
  for (const [keySource, counted] of [
    ['apiKeyHelper', true],
    [undefined, false],
  ] as const) {
    const machineAdmin = cast.machineAdmin;
    const reg = await api(app.url, 'POST', '/api/remote/machines/register', {
      auth: cast.admin.session,
      body: { tenant_id: cast.tenantId },
    });
    const agent = startAgent({
      serverUrl: app.url,
      registrationToken: reg.body.registration_token,
      extra: { cli_env: { FAKE_CLI_ECHO: '1', ...(keySource ? { FAKE_CLI_KEY_SOURCE: keySource } : {}) } },
    });
    try {
      const machineId = await waitUntil(
        'registered',
        async () => agent.config().agent_token && agent.config().machine_id,
      );
      await assign(app.url, cast.admin.session, machineId, machineAdmin.id, 'user');
      await waitUntil(
        'online',
        async () =>
          (await api(app.url, 'GET', `/api/remote/machines/${machineId}`, { auth: cast.admin.session })).body
            .status === 'online',
      );
      const before = (await usedToday(machineAdmin.id))?.tokensUsed ?? 0;
      const created = await api(app.url, 'POST', '/api/remote/sessions', {
        auth: machineAdmin.session,
        body: { machine_id: machineId, project_path: mkdtempSync(path.join(os.tmpdir(), 'svc-project-')) },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const sid = created.body.session_id;
      const content = 'count me please';
      await api(app.url, 'POST', `/api/remote/sessions/${sid}/chat`, {
        auth: machineAdmin.session,
        body: { content },
      });
      const [row] = await waitUntil('usage report stored', async () => {
        const rows = await db.select().from(t.usageReports).where(eq(t.usageReports.sessionId, sid));
        return rows.length ? rows : undefined;
      });
      // The fake CLI's echo usage: input = content length, output = content length + 6.
      assert.equal(row!.inputTokens, content.length);
      assert.equal(row!.outputTokens, content.length + 6);
      assert.equal(row!.machineId, machineId);
      // The row is stored before the report is counted: wait for the handler's closing audit record.
      await waitUntil('usage report handled', async () => {
        const audited = await app.database.sql.query(
          "SELECT id FROM audit_logs WHERE action = 'REMOTE_USAGE_REPORT' AND resource_id = ? AND success = ?",
          [sid, app.database.dialect === 'postgres' ? true : 1],
        );
        return audited.length ? true : undefined;
      });
      const after = (await usedToday(machineAdmin.id))?.tokensUsed ?? 0;
      assert.equal(after - before, counted ? 2 * content.length + 6 : 0, `key source ${keySource}`);
      await api(app.url, 'POST', `/api/remote/sessions/${sid}/stop`, { auth: machineAdmin.session });
    } finally {
      await agent.stop();
    }
  }
});
