// Alert producers (issue 11 item 2): an account lockout, proxy refusals repeated past the audit flood
// bound, and a newly recorded anomaly each raise ONE tenant-wide alert, seen by the admins of the
// tenant concerned (and system admins) through GET /api/alerts, never by another tenant's admin.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { UNAUTHENTICATED_BURST } from '../../domain/audit-policy.ts';
import { proxyTokenService } from '../../services/proxy-tokens.ts';
import { createUser } from '../support/actors.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { api, type Session } from '../support/session.ts';
import { type Seeded, seedAnalytics } from './analytics/seed.ts';

let app: TestApp;
let s: Seeded;
let adminA: Session;
let adminB: Session;
let platform: Session;

before(async () => {
  app = await startTestApp();
  s = await seedAnalytics(app);
  adminA = s.cast.actors.tenant_admin.session!;
  adminB = s.cast.actors.other_tenant_admin.session!;
  platform = s.cast.admin;
});
after(async () => {
  await app?.close();
});

const alertsOf = async (who: Session, type: string) => {
  const r = await api(app.url, 'GET', `/api/alerts?type=${type}&limit=500`, { auth: who });
  assert.equal(r.status, 200);
  return r.body.alerts as any[];
};

test('an account lockout raises one security alert for the admins of the tenant', async () => {
  const victim = await createUser(app, s.cast.admin, { role: 'user', tenant_id: s.cast.tenantA });
  // The default policy locks after 5 failures; later attempts are refused as locked.
  for (let i = 0; i < 7; i++) {
    const r = await api(app.url, 'POST', '/api/auth/login', {
      body: { username: victim.username, password: 'wrong-password-123' },
    });
    assert.ok(r.status === 401 || r.status === 429, String(r.status));
  }
  const mine = (list: any[]) => list.filter((a) => a.title.includes(victim.username));
  const seen = mine(await alertsOf(adminA, 'security'));
  assert.equal(seen.length, 1, 'raised once per lock');
  assert.equal(seen[0].severity, 'warning');
  assert.equal(seen[0].user_id, null, 'tenant-wide');
  assert.match(seen[0].alert_id, /^lockout:/);
  assert.equal(mine(await alertsOf(platform, 'security')).length, 1);
  assert.equal(mine(await alertsOf(adminB, 'security')).length, 0, "tenant B's admin does not see it");
});

test('proxy refusals repeated past the burst raise one alert per session, reason and window', async () => {
  const { db, t } = app.database;
  const user = await createUser(app, s.cast.admin, { role: 'user', tenant_id: s.cast.tenantB });
  const sessionId = randomUUID();
  await db.insert(t.agentSessions).values({
    sessionId,
    tenantId: s.cast.tenantB,
    toolName: 'cli_beta',
    hostName: 'machine-alerts',
    userId: user.id,
    status: 'stopped',
    workspaceType: 'remote',
    remoteMachineId: 'machine-alerts',
  });
  const { token } = await proxyTokenService({
    database: app.database,
    settings: app.settings,
    now: app.deps.now,
  }).issue({ sessionId, userId: user.id, tenantId: s.cast.tenantB, provider: 'anthropic' });
  const refusals = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const r = await fetch(`${app.url}/api/remote/llm-proxy/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': token, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'hi' }] }),
      });
      assert.equal(r.status, 401);
      await r.arrayBuffer();
    }
  };
  const repeated = async (who: Session) =>
    (await alertsOf(who, 'security')).filter(
      (a) => a.title === 'Repeated refusals: REMOTE_LLM_PROXY_REFUSED',
    );

  await refusals(UNAUTHENTICATED_BURST);
  assert.equal((await repeated(adminB)).length, 0, 'within the burst: no alert');
  await refusals(5);
  const seen = await repeated(adminB);
  assert.equal(seen.length, 1, 'once per key and window');
  assert.equal(seen[0].tenant_id, s.cast.tenantB);
  assert.ok(!JSON.stringify(seen[0]).includes(token), 'the token is not in the alert');
  assert.equal((await repeated(adminA)).length, 0, "tenant A's admin does not see it");
});

test('a newly recorded anomaly raises one alert; detecting it again does not', async () => {
  const detect = async () => {
    const r = await api(app.url, 'GET', '/api/analysis/anomaly-detection', {
      auth: s.cast.actors.user.session!,
    });
    assert.equal(r.status, 200);
    return r.body.anomalies as any[];
  };
  const [first] = await detect();
  assert.ok(first, 'the planted spike is detected');
  await detect();
  const seen = (await alertsOf(adminA, 'anomaly')).filter((a) => a.alert_id === `anomaly:${first.record.id}`);
  assert.equal(seen.length, 1);
  assert.match(seen[0].title, /token_spike/);
  assert.equal(seen[0].tenant_id, s.cast.tenantA);
  assert.equal((await alertsOf(adminB, 'anomaly')).length, 0, "tenant B's admin does not see it");
  assert.equal((await alertsOf(platform, 'anomaly')).length, 1);
});
