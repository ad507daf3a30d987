// The edge of the API under attack (issue 8, items 9, 10 and 15): Host headers, what /readyz tells
// whom, the workspace check, development keys, the audit flood bound and a tenant's audit switch.
import assert from 'node:assert/strict';
import { rmSync, statSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadSettings } from '../../config/settings.ts';
import { UNAUTHENTICATED_BURST, UNAUTHENTICATED_WINDOW_MS } from '../../domain/audit-policy.ts';
import { DEV_SECRETS_FILE, developmentSecrets, storageKey } from '../../services/secrets.ts';
import { createTenant, createUser, uniqueName } from '../support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../support/harness.ts';
import { api, login, type Session } from '../support/session.ts';

/** GET with an explicit Host header (fetch does not let a caller choose it). */
function getWithHost(url: string, pathName: string, host: string): Promise<{ status: number; body: any }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: u.hostname, port: u.port, path: pathName, method: 'GET', headers: { host } },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : null }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('Host header', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({
      env: {
        SVC_PUBLIC_URL: 'https://svc.example.test',
        SVC_ALLOWED_HOSTS: 'lan-name.internal',
        // This instance's own address behind the load balancer (terminal relays redirect browsers here).
        SVC_INSTANCE_URL: 'http://api-2.svc.internal:3000',
      },
    });
  });
  after(() => app?.close());

  test('names of this server are answered: public URL, instance URL, HOST, loopback, SVC_ALLOWED_HOSTS', async () => {
    const port = new URL(app.url).port;
    for (const host of [
      'svc.example.test',
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      '[::1]',
      '127.0.0.5',
      'LAN-NAME.internal:8443',
      'api-2.svc.internal:3000',
    ])
      assert.equal((await getWithHost(app.url, '/livez', host)).status, 200, host);
  });

  test('a foreign Host (DNS rebinding, a poisoned install URL) gets 421 and nothing else', async () => {
    for (const host of [
      'evil.example',
      'svc.example.test.evil.example',
      'user@svc.example.test',
      'api-2.svc.internal.evil.example',
    ]) {
      const r = await getWithHost(app.url, '/api/remote/agent/install.sh', host);
      assert.equal(r.status, 421, host);
      assert.match(r.body.error, /does not answer for that Host name/);
    }
  });

  test('a 15 KB Host header is refused at once (no regex runs over it)', async () => {
    const r = await getWithHost(app.url, '/livez', `${'a'.repeat(15_000)}.example`);
    assert.equal(r.status, 421);
  });

  test('the install script names the configured public URL, never the caller-chosen Host', async () => {
    const res = await fetch(`${app.url}/api/remote/agent/install.sh`);
    assert.equal(res.status, 200);
    const script = await res.text();
    assert.match(script, /https:\/\/svc\.example\.test/);
  });
});

describe('/readyz and the workspace', () => {
  let app: TestApp;
  let admin: Session;
  before(async () => {
    app = await startTestApp({ worker: false });
    admin = await login(app.url, ADMIN.username, ADMIN.password);
  });
  after(() => app?.close());

  test('failure detail only for authenticated system administrators', async () => {
    // No worker polls: background services are reported unavailable (with a detail), not part of readiness.
    const anon = await api(app.url, 'GET', '/readyz');
    assert.equal(anon.status, 200);
    assert.equal(anon.body.checks.background_services.status, 'unavailable');
    for (const [name, check] of Object.entries<any>(anon.body.checks))
      assert.equal(check.detail, undefined, `${name} shows no detail to anonymous callers`);
    const user = await createUser(app, admin, { role: 'user', tenant_id: 1 });
    const asUser = await api(app.url, 'GET', '/readyz', {
      auth: await login(app.url, user.username, user.password),
    });
    assert.equal(asUser.body.checks.background_services.detail, undefined);
    const asAdmin = await api(app.url, 'GET', '/readyz', { auth: admin });
    assert.equal(asAdmin.status, 200);
    assert.match(asAdmin.body.checks.background_services.detail, /no worker polls/);
    const health = await api(app.url, 'GET', '/health');
    assert.equal(health.body.deprecated, true);
    assert.equal(health.body.checks.background_services.detail, undefined);
  });

  test('the workspace check fails when the workspace directory is missing, and readyz never creates it', async () => {
    const before = await api(app.url, 'GET', '/readyz', { auth: admin });
    assert.equal(before.body.checks.workspace.status, 'ok');
    assert.ok(before.body.checks.workspace.free_bytes > 0);
    rmSync(app.settings.workspaceDir, { recursive: true });
    const missing = await api(app.url, 'GET', '/readyz', { auth: admin });
    assert.equal(missing.body.checks.workspace.status, 'fail');
    assert.match(missing.body.checks.workspace.detail, /missing or not writable/);
    assert.throws(() => statSync(app.settings.workspaceDir), /ENOENT/);
  });
});

describe('development keys', () => {
  test('without SVC_ENCRYPTION_KEY / SECRET_KEY outside production, random keys are kept 0600 in the data dir', async () => {
    const app = await startTestApp({ env: { SVC_ENCRYPTION_KEY: '', SECRET_KEY: '' } });
    try {
      const s = app.settings;
      assert.equal(s.SVC_ENCRYPTION_KEY, undefined);
      const first = developmentSecrets(s.dataDir);
      const file = path.join(s.dataDir, DEV_SECRETS_FILE);
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.ok(first.encryption_key.length >= 40 && first.secret_key !== first.encryption_key);
      // Another process reading the same data directory derives the same key, and it is not the
      // old public constant.
      const again = loadSettings({ SVC_DATA_DIR: s.dataDir });
      assert.deepEqual(storageKey(again), storageKey(s));
      assert.notDeepEqual(
        storageKey({
          ...again,
          SVC_ENCRYPTION_KEY: 'svc-development-only-encryption-key-do-not-use-in-production',
        }),
        storageKey(s),
      );
      // Production never falls back.
      assert.throws(
        () => storageKey({ ...again, production: true }),
        /SVC_ENCRYPTION_KEY is required in production/,
      );
    } finally {
      await app.close();
    }
  });
});

describe('audit policy', () => {
  let app: TestApp;
  let admin: Session;
  before(async () => {
    app = await startTestApp();
    admin = await login(app.url, ADMIN.username, ADMIN.password);
  });
  after(() => app?.close());

  const countRows = async (action: string, username?: string) =>
    (
      await app.database.sql.query<{ n: number }>(
        `SELECT count(*) AS n FROM audit_logs WHERE action = ?${username ? ' AND username = ?' : ''}`,
        username ? [action, username] : [action],
      )
    )[0]!.n;

  test('unauthenticated failures are bounded per minute and the rest summarised', async () => {
    const before = Number(await countRows('REMOTE_AGENT_REGISTER'));
    const tries = UNAUTHENTICATED_BURST + 25;
    for (let i = 0; i < tries; i++) {
      const r = await api(app.url, 'POST', '/api/remote/agent/register', {
        body: { registration_token: `forged-${i}`, machine_id: `m-${i}` },
      });
      assert.equal(r.status, 401);
    }
    assert.equal(Number(await countRows('REMOTE_AGENT_REGISTER')) - before, UNAUTHENTICATED_BURST);
    assert.equal(Number(await countRows('AUDIT_SUPPRESSED')), 0, 'the summary waits for the window to end');
    app.clock.advance(UNAUTHENTICATED_WINDOW_MS + 1000);
    await api(app.url, 'POST', '/api/remote/agent/register', {
      body: { registration_token: 'forged-late', machine_id: 'm-late' },
    });
    const [summary] = await app.database.sql.query<{ details: string; severity: string }>(
      "SELECT details, severity FROM audit_logs WHERE action = 'AUDIT_SUPPRESSED'",
    );
    assert.ok(summary, 'a summary row is written');
    const details = JSON.parse(summary.details);
    assert.equal(details.action, 'REMOTE_AGENT_REGISTER');
    assert.equal(details.suppressed, tries - UNAUTHENTICATED_BURST);
    assert.equal(summary.severity, 'warning');
  });

  test("audit_log_enabled=false drops the tenant's routine trail but keeps failures and the switch itself", async () => {
    const tenantId = await createTenant(app, admin, uniqueName('quiet'));
    const u = await createUser(app, admin, { role: 'user', tenant_id: tenantId });
    const off = await api(app.url, 'PUT', `/api/tenants/${tenantId}/settings`, {
      auth: admin,
      body: { audit_log_enabled: false },
    });
    assert.equal(off.status, 200);
    assert.equal(Number(await countRows('TENANT_SETTINGS_UPDATE')) >= 1, true);
    await login(app.url, u.username, u.password);
    assert.equal(Number(await countRows('LOGIN', u.username)), 0, 'routine login not recorded');
    const wrong = await api(app.url, 'POST', '/api/auth/login', {
      body: { username: u.username, password: 'wrong-password-here' },
    });
    assert.equal(wrong.status, 401);
    assert.equal(Number(await countRows('LOGIN_FAILED', u.username)), 1, 'failures are kept');
    await api(app.url, 'PUT', `/api/tenants/${tenantId}/settings`, {
      auth: admin,
      body: { audit_log_enabled: true },
    });
    await login(app.url, u.username, u.password);
    assert.equal(Number(await countRows('LOGIN', u.username)), 1, 'recorded again once switched back on');
  });
});

describe('header size', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(() => app?.close());

  test('a request head over 16 KiB is refused with 431 before any handler', async () => {
    const r = await fetch(`${app.url}/livez`, { headers: { 'x-padding': 'a'.repeat(17 * 1024) } });
    assert.equal(r.status, 431);
    assert.equal(
      (await fetch(`${app.url}/livez`, { headers: { 'x-padding': 'a'.repeat(8 * 1024) } })).status,
      200,
    );
  });
});
