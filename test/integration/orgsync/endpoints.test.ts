// POST /api/admin/chatplat_a|chatplat_b/sync and GET .../sync/<run_id> as every kind of caller, with
// every kind of bad input (no worker runs here: started workflows wait on the task queue, which is
// what the "already running" refusal needs). Proves: 401 anonymous; 403 for non-admin roles; 400 for
// a tenant_id that is not a positive integer or names no tenant (and for unknown fields); 403 when a
// tenant admin names another tenant or the configured default is another tenant; 409 for an
// unconfigured platform and for a second run while one is going; 202 {run_id, platform, tenant_id}
// with an audit record; the status endpoint scoped to the caller's tenant; the secret never answered.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { buildCast, type Cast } from '../../support/actors.ts';
import { startTestApp, type TestApp } from '../../support/harness.ts';
import { api } from '../../support/session.ts';

const SECRET = 'endpoint-secret-9f8e7d';
let app: TestApp;
let cast: Cast;
const started: string[] = [];

before(async () => {
  app = await startTestApp({
    env: {
      SVC_CHATPLAT_A__APP_KEY: 'key-a',
      SVC_CHATPLAT_A__APP_SECRET: SECRET,
      SVC_CHATPLAT_A__API_BASE_URL: 'http://127.0.0.1:9/',
    },
  });
  cast = await buildCast(app);
  app.deps.settings.chatplat_a.org_sync_tenant_id = cast.tenantB;
});
after(async () => {
  const client = await app.deps.temporal.client();
  for (const id of started)
    await client.workflow
      .getHandle(id)
      .terminate('test over')
      .catch(() => undefined);
  await app?.close();
});

const post = (actor: keyof Cast['actors'], body?: unknown, platform = 'chatplat_a') =>
  api(app.url, 'POST', `/api/admin/${platform}/sync`, { auth: cast.actors[actor].session, body });

test('only administrators may start a sync', async () => {
  assert.equal((await post('anonymous', {})).status, 401);
  for (const who of ['user', 'manager', 'readonly'] as const) {
    const r = await post(who, { tenant_id: cast.tenantA });
    assert.equal(r.status, 403, who);
    assert.equal(r.body.error, 'Admin access required');
  }
});

test('a bad or unknown tenant_id is a 400; unknown fields too', async () => {
  for (const tenant_id of ['abc', '3', 0, -1, 1.5, true, 2 ** 31, [1], { id: 1 }]) {
    const r = await post('platform_admin', { tenant_id });
    assert.equal(r.status, 400, JSON.stringify(tenant_id));
    assert.equal(r.body.error, 'Invalid tenant_id');
  }
  const unknown = await post('platform_admin', { tenant_id: 2_000_000_000 });
  assert.equal(unknown.status, 400);
  assert.equal(unknown.body.error, 'Unknown tenant_id: 2000000000');
  const extra = await post('platform_admin', { tenant_id: cast.tenantA, app_secret: 'x' });
  assert.equal(extra.status, 400);
});

test('a tenant admin syncs only their own tenant', async () => {
  const other = await post('tenant_admin', { tenant_id: cast.tenantB });
  assert.equal(other.status, 403);
  assert.equal(other.body.error, 'Cross-tenant access denied');
  // The configured default (tenant B) is not theirs either; a missing tenant is not probed first.
  assert.equal((await post('tenant_admin')).status, 403);
  assert.equal((await post('tenant_admin', { tenant_id: 2_000_000_000 })).status, 403);

  const own = await post('tenant_admin', { tenant_id: cast.tenantA });
  assert.equal(own.status, 202, JSON.stringify(own.body));
  assert.deepEqual(own.body, { run_id: own.body.run_id, platform: 'chatplat_a', tenant_id: cast.tenantA });
  assert.match(own.body.run_id, /^orgsync-chatplat_a-t\d+-[0-9a-f]{16}$/);
  started.push(own.body.run_id);

  const again = await post('platform_admin', { tenant_id: cast.tenantA });
  assert.equal(again.status, 409);
  assert.match(again.body.error, /already running/);

  const status = (actor: keyof Cast['actors'], platform = 'chatplat_a', id = own.body.run_id) =>
    api(app.url, 'GET', `/api/admin/${platform}/sync/${id}`, { auth: cast.actors[actor].session });
  const mine = await status('tenant_admin');
  assert.equal(mine.status, 200);
  assert.equal(mine.body.status, 'running');
  assert.equal(mine.body.tenant_id, cast.tenantA);
  assert.equal((await status('platform_admin')).status, 200);
  assert.equal((await status('other_tenant_admin')).status, 404);
  assert.equal((await status('user')).status, 403);
  assert.equal((await status('anonymous')).status, 401);
  assert.equal((await status('platform_admin', 'chatplat_b')).status, 404);
  assert.equal((await status('platform_admin', 'chatplat_a', 'no-such-run')).status, 404);
  assert.equal((await status('platform_admin', 'chatplat_a', '..%2F..%2Fetc')).status, 404);

  const audit = await app.database.sql.query<Record<string, unknown>>(
    "SELECT user_id, target_tenant_id, details FROM audit_logs WHERE action = 'ORG_SYNC_STARTED' AND resource_id = ?",
    [own.body.run_id],
  );
  assert.equal(audit.length, 1);
  assert.equal(Number(audit[0]!.user_id), cast.actors.tenant_admin.id);
  assert.equal(Number(audit[0]!.target_tenant_id), cast.tenantA);
  for (const r of [own, mine]) assert.ok(!JSON.stringify(r.body).includes(SECRET));
});

test('a system admin without tenant_id syncs the configured default tenant', async () => {
  const r = await post('platform_admin');
  assert.equal(r.status, 202, JSON.stringify(r.body));
  assert.equal(r.body.tenant_id, cast.tenantB);
  started.push(r.body.run_id);
});

test('an unconfigured platform is a 409 that says what is missing', async () => {
  const r = await post('platform_admin', { tenant_id: cast.tenantA }, 'chatplat_b');
  assert.equal(r.status, 409);
  assert.equal(
    r.body.error,
    'chatplat_b is not configured: set chatplat_b.app_key and chatplat_b.app_secret',
  );
  // input is still validated first
  assert.equal((await post('platform_admin', { tenant_id: 'x' }, 'chatplat_b')).status, 400);
  assert.ok(!app.logs.join('\n').includes(SECRET));
});
