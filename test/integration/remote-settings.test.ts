// Remote settings that shape running behaviour (issue 8 item 15): the proxy-token lifetime of a
// session type comes from settings.remote (here lowered to 2 minutes through its environment
// variable), and the offline threshold from settings.agent.offline_after_seconds (here 30 s); the
// stored remote_machines.status is written back to offline once a reader sees a machine past it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { type MockProvider, startMockProvider } from '../fixtures/mock-provider.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import {
  agentMessage,
  assign,
  buildRemoteCast,
  type RemoteCast,
  registerFakeMachine,
  scriptedAgent,
} from '../support/remote.ts';
import { api } from '../support/session.ts';
import { proxyChat, proxyTokenOf, storeMockKey } from '../support/session-teardown.ts';

let app: TestApp;
let cast: RemoteCast;
let mock: MockProvider;

before(async () => {
  app = await startTestApp({
    worker: true,
    env: { SVC_REMOTE__PROXY_TOKEN_TTL_GENERAL_MINUTES: '2', SVC_AGENT__OFFLINE_AFTER_SECONDS: '30' },
  });
  mock = await startMockProvider();
  cast = await buildRemoteCast(app);
  await storeMockKey(app, cast.admin.session, cast.tenantId, mock);
});
after(async () => {
  await mock?.close();
  await app?.close();
});

const claimsOf = (token: string) =>
  JSON.parse(Buffer.from(token.slice('svcpt_'.length).split('.')[0]!, 'base64url').toString('utf8'));

test('a lowered proxy_token_ttl_general_minutes gives tokens that expire accordingly', async () => {
  assert.equal(app.settings.remote.proxy_token_ttl_general_minutes, 2);
  const m = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  await agentMessage(app.url, m);
  const agent = scriptedAgent(app.url, m);
  try {
    await assign(app.url, cast.admin.session, m.machineId, cast.userA.id, 'user');
    const created = await api(app.url, 'POST', '/api/remote/sessions', {
      auth: cast.userA.session,
      body: { machine_id: m.machineId, project_path: '/tmp' },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const sid = created.body.session_id;
    const token = await proxyTokenOf(app, sid);
    const claims = claimsOf(token);
    assert.equal(claims.typ, 'general');
    assert.equal(claims.exp - claims.iat, 120, 'the token lives 2 minutes');
    const { db, t } = app.database;
    const [row] = await db.select().from(t.proxyTokens).where(eq(t.proxyTokens.jti, claims.jti));
    assert.equal(row!.expiresAt.getTime(), claims.exp * 1000, 'the issuance record agrees');

    assert.equal((await proxyChat(app, token)).status, 200);
    app.clock.advance(121_000);
    try {
      const expired = await proxyChat(app, token);
      assert.equal(expired.status, 401, 'expired after 2 minutes, not 4 hours');
      assert.match(expired.body.error.message, /expired/);
    } finally {
      app.clock.advance(-121_000);
    }
  } finally {
    await agent.stop();
  }
});

test('offline after agent.offline_after_seconds, and the stored status is written back', async () => {
  const m = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  const { db, t } = app.database;
  const stored = async () =>
    (await db.select().from(t.remoteMachines).where(eq(t.remoteMachines.machineId, m.machineId)))[0]!.status;
  const shown = async () =>
    (await api(app.url, 'GET', `/api/remote/machines/${m.machineId}`, { auth: cast.admin.session })).body
      .status;

  assert.equal((await agentMessage(app.url, m)).status, 200);
  assert.equal(await stored(), 'online');
  app.clock.advance(29_000);
  try {
    assert.equal(await shown(), 'online', 'still online at 29 s');
    assert.equal(await stored(), 'online');
    app.clock.advance(2_000);
    assert.equal(await shown(), 'offline', 'offline at 31 s (default would be 180 s)');
    assert.equal(await stored(), 'offline', 'the column follows');
    const list = await api(app.url, 'GET', '/api/remote/machines/available', { auth: cast.admin.session });
    assert.ok(!list.body.machines.some((x: any) => x.machine_id === m.machineId));
    assert.equal((await agentMessage(app.url, m)).status, 200);
    assert.equal(await stored(), 'online');
    assert.equal(await shown(), 'online');
  } finally {
    app.clock.advance(-31_000);
  }
});
