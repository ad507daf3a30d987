// Signed robot webhooks for alerts (issue 11 item 3; spec document 2, "Organization sync and alert
// webhooks" item 5) on the real API, database, Temporal worker and a local HTTP receiver that verifies
// `timestamp` + `sign` the way a robot platform does. Proves: the preference endpoints (401, 400 for
// URLs the egress policy refuses, the per-user secret stored only as ciphertext and never returned),
// the egress allow-list (127.0.0.1 is refused without it), delivery through the alert bus and a
// Temporal workflow per alert and user (delivered once however often it is started), the secret
// resolution order (per-user, global, legacy in-URL), retries after 500s, a final 4xx, recipients
// (the alert's user; a tenant-wide alert's own tenant admins; push_enabled and min_severity), and that
// no secret appears in any response, log line or workflow history.
import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { notificationPreferencesRepository } from '../../db/repositories/alerts.ts';
import { decryptSecret } from '../../domain/crypto/fernet.ts';
import { raiseAlert } from '../../services/alerts/raise.ts';
import { deliverAlertWebhooks } from '../../services/alerts/webhook-delivery.ts';
import { normaliseWebhookUrl } from '../../services/alerts/webhook-preference.ts';
import { storageKey } from '../../services/secrets.ts';
import { alertWebhookWorkflowId } from '../../workflows/alerts/contract.ts';
import { buildCast, type Cast } from '../support/actors.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { api } from '../support/session.ts';

const USER_SECRET = `SECuser-${randomUUID()}`;
const GLOBAL_SECRET = `SECglobal-${randomUUID()}`;
const LEGACY_SECRET = `SEClegacy-${randomUUID()}`;
const SECRETS = [USER_SECRET, GLOBAL_SECRET, LEGACY_SECRET];

interface Received {
  path: string;
  query: URLSearchParams;
  body: { msgtype: string; text: { content: string } };
  /** The signature matched the secret the receiver expects for this path. */
  verified: boolean;
  status: number;
}

/** The test robot: verifies signatures with the secret set per path, answers queued statuses. */
class Receiver {
  received: Received[] = [];
  secrets = new Map<string, string>();
  statuses = new Map<string, number[]>();
  server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (c) => {
      data += c;
    });
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://receiver');
      const ts = url.searchParams.get('timestamp');
      const sign = url.searchParams.get('sign');
      const secret = this.secrets.get(url.pathname);
      const expected =
        secret && ts ? createHmac('sha256', secret).update(`${ts}\n${secret}`).digest('base64') : undefined;
      const fresh = ts !== null && Math.abs(Date.now() - Number(ts)) < 3_600_000;
      const verified = expected !== undefined && sign === expected && fresh;
      const status = this.statuses.get(url.pathname)?.shift() ?? (verified ? 200 : 401);
      this.received.push({
        path: url.pathname,
        query: url.searchParams,
        body: JSON.parse(data),
        verified,
        status,
      });
      res.writeHead(status, { 'content-type': 'application/json' }).end('{"errcode":0}');
    });
  });
  url = '';
  async start() {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  about(title: string) {
    return this.received.filter((r) => r.body.text.content.includes(title));
  }
}

let app: TestApp;
let cast: Cast;
const receiver = new Receiver();
const workflowIds: string[] = [];
const responses: string[] = [];

const call = async (...args: Parameters<typeof api>) => {
  const r = await api(...args);
  responses.push(JSON.stringify(r.body));
  return r;
};
const actor = (name: keyof Cast['actors']) => cast.actors[name];
const q = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
  app.database.sql.query<T>(text, params);

async function waitFor<T>(what: string, probe: () => T | undefined | false): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const v = probe();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** Raises an alert and returns its ids; the title is unique so the receiver's rows can be told apart. */
async function raise(opts: {
  userId: number | null;
  tenantId: number | null;
  severity?: 'info' | 'warning' | 'critical';
}) {
  const alertId = randomUUID();
  const title = `Alert ${alertId.slice(0, 8)}`;
  const id = await raiseAlert(app.database, {
    alertId,
    alertType: 'test',
    severity: opts.severity ?? 'critical',
    title,
    message: 'something happened',
    userId: opts.userId,
    tenantId: opts.tenantId,
  });
  assert.ok(id);
  return { id, alertId, title };
}

async function workflowResult(alertId: string, userId: number) {
  const wid = alertWebhookWorkflowId(alertId, userId);
  workflowIds.push(wid);
  const client = await app.deps.temporal.client();
  const handle = await waitFor('the workflow to start', () => client.workflow.getHandle(wid));
  for (;;) {
    try {
      return await handle.result();
    } catch (err) {
      if ((err as Error).name !== 'WorkflowNotFoundError') throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

const putWebhook = (who: keyof Cast['actors'], webhook_url: unknown) =>
  call(app.url, 'PUT', '/api/alerts/preferences/webhook', {
    auth: actor(who).session,
    body: { webhook_url },
  });

before(async () => {
  await receiver.start();
  app = await startTestApp({
    worker: true,
    env: { SVC_EGRESS__ALLOW_HOSTS: '127.0.0.1', SVC_ALERTS__CHATPLAT_A_WEBHOOK_SECRET: GLOBAL_SECRET },
  });
  cast = await buildCast(app);
});

after(async () => {
  await app?.close();
  receiver.server.close();
});

test('the webhook endpoints need a session (401)', async () => {
  for (const method of ['GET', 'PUT', 'DELETE'])
    assert.equal(
      (await api(app.url, method, '/api/alerts/preferences/webhook', method === 'PUT' ? { body: {} } : {}))
        .status,
      401,
    );
});

test('PUT refuses what the egress policy refuses, naming webhook_url (400)', async () => {
  const bad: unknown[] = [
    undefined,
    '',
    42,
    'not a url',
    'ftp://robot.example.com/x',
    'http://robot.example.com/send', // https only unless allow-listed
    'https://10.1.2.3/send',
    'https://192.168.0.5/send',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/send',
    'https://localhost/send',
    'https://metadata.google.internal/x',
    'https://user:pass@robot.example.com/send',
    'https://robot.example.com/send#frag',
    `https://robot.example.com/${'a'.repeat(2100)}`,
  ];
  for (const webhook_url of bad) {
    const r = await putWebhook('user', webhook_url);
    assert.equal(r.status, 400, `${String(webhook_url).slice(0, 60)}: ${JSON.stringify(r.body)}`);
    assert.match(r.body.error, /webhook_url/);
  }
  assert.equal((await putWebhook('user', 'https://robot.example.com/send?access_token=x')).status, 200);
});

test('127.0.0.1 over http is refused unless egress.allow_hosts names it', () => {
  const local = `${receiver.url}/robot?svc_robot_secret=s`;
  assert.throws(() => normaliseWebhookUrl(local), /webhook_url must be an https URL/);
  assert.throws(
    () => normaliseWebhookUrl(local.replace('http:', 'https:')),
    /webhook_url host 127\.0\.0\.1 is a loopback target/,
  );
  assert.throws(
    () => normaliseWebhookUrl(local.replace('http:', 'https:'), { allow_hosts: ['10.0.0.1'] }),
    /loopback/,
  );
  assert.deepEqual(normaliseWebhookUrl(local, { allow_hosts: ['127.0.0.1'] }), {
    url: `${receiver.url}/robot`,
    secret: 's',
  });
});

test('a per-user secret is stored only as ciphertext and never returned', async () => {
  const user = actor('user');
  const saved = `${receiver.url}/robot/user?access_token=t-user`;
  const r = await putWebhook('user', `${saved}&svc_robot_secret=${USER_SECRET}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual(r.body, { webhook_url: saved, has_secret: true });
  const g = await call(app.url, 'GET', '/api/alerts/preferences/webhook', { auth: user.session });
  assert.deepEqual(g.body, { webhook_url: saved, has_secret: true });
  const prefs = await call(app.url, 'GET', '/api/alerts/preferences', { auth: user.session });
  assert.equal(prefs.body.webhook_url, saved, 'the notification preferences show the webhook');
  assert.equal(prefs.body.has_secret, true);
  assert.ok(!JSON.stringify(prefs.body).includes(USER_SECRET));
  const [row] = await q<{ webhook_url: string; webhook_secret_encrypted: string }>(
    'SELECT webhook_url, webhook_secret_encrypted FROM notification_preferences WHERE user_id = ?',
    [user.id],
  );
  assert.equal(row!.webhook_url, saved);
  assert.ok(!row!.webhook_secret_encrypted.includes(USER_SECRET));
  assert.equal(decryptSecret(row!.webhook_secret_encrypted, storageKey(app.settings)), USER_SECRET);
  // The other preference columns keep their defaults.
  assert.deepEqual(await notificationPreferencesRepository(app.database.sql).get(user.id!), {
    email_enabled: true,
    push_enabled: true,
    min_severity: 'warning',
  });
});

test('an alert for the user is pushed once, signed with the per-user secret, without svc_robot_secret', async () => {
  receiver.secrets.set('/robot/user', USER_SECRET);
  const user = actor('user');
  const a = await raise({ userId: user.id!, tenantId: cast.tenantA });
  assert.deepEqual(await workflowResult(a.alertId, user.id!), { result: 'delivered', status: 200 });
  const [got] = await waitFor(
    'the push',
    () => receiver.about(a.title).length === 1 && receiver.about(a.title),
  );
  assert.equal(got!.path, '/robot/user');
  assert.equal(got!.verified, true, 'signature verified with the per-user secret');
  assert.equal(got!.query.get('access_token'), 't-user');
  assert.equal(got!.query.get('svc_robot_secret'), null);
  assert.deepEqual(got!.body, {
    msgtype: 'text',
    text: { content: `critical ${a.title}: something happened` },
  });
  // Other instances (or a second bus event) starting the same delivery do not push again.
  const alert = {
    id: a.id,
    alert_id: a.alertId,
    severity: 'critical' as const,
    user_id: user.id!,
    tenant_id: cast.tenantA,
  };
  assert.deepEqual(await deliverAlertWebhooks(app.deps, alert), [user.id]);
  assert.deepEqual(await deliverAlertWebhooks(app.deps, alert), [user.id]);
  await workflowResult(a.alertId, user.id!);
  assert.equal(receiver.about(a.title).length, 1);
});

test('without a per-user secret the global alerts.chatplat_a_webhook_secret signs', async () => {
  const manager = actor('manager');
  const r = await putWebhook('manager', `${receiver.url}/robot/manager`);
  assert.deepEqual(r.body, { webhook_url: `${receiver.url}/robot/manager`, has_secret: false });
  receiver.secrets.set('/robot/manager', GLOBAL_SECRET);
  const a = await raise({ userId: manager.id!, tenantId: cast.tenantA });
  assert.deepEqual(await workflowResult(a.alertId, manager.id!), { result: 'delivered', status: 200 });
  const [got] = receiver.about(a.title);
  assert.equal(got!.verified, true, 'signature verified with the global secret');
});

test('a legacy in-URL secret comes after the global one, and is removed before sending', async () => {
  const readonly = actor('readonly');
  const saved = `${receiver.url}/robot/legacy?access_token=t-legacy`;
  // An older row: the secret still inside the saved URL, no ciphertext.
  await q(
    `INSERT INTO notification_preferences (user_id, webhook_url, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (user_id) DO UPDATE SET webhook_url = excluded.webhook_url`,
    [readonly.id, `${saved}&svc_robot_secret=${LEGACY_SECRET}`, new Date()],
  );
  const view = await call(app.url, 'GET', '/api/alerts/preferences/webhook', { auth: readonly.session });
  assert.deepEqual(view.body, { webhook_url: saved, has_secret: true });

  receiver.secrets.set('/robot/legacy', GLOBAL_SECRET);
  const first = await raise({ userId: readonly.id!, tenantId: cast.tenantA });
  await workflowResult(first.alertId, readonly.id!);
  assert.equal(receiver.about(first.title)[0]!.verified, true, 'global wins over legacy');

  const globalSecret = app.settings.alerts.chatplat_a_webhook_secret;
  app.settings.alerts.chatplat_a_webhook_secret = undefined;
  try {
    receiver.secrets.set('/robot/legacy', LEGACY_SECRET);
    const second = await raise({ userId: readonly.id!, tenantId: cast.tenantA });
    await workflowResult(second.alertId, readonly.id!);
    const [got] = receiver.about(second.title);
    assert.equal(got!.verified, true, 'legacy secret signs when there is no global one');
    assert.equal(got!.query.get('svc_robot_secret'), null);
    assert.equal(got!.query.get('access_token'), 't-legacy');
  } finally {
    app.settings.alerts.chatplat_a_webhook_secret = globalSecret;
  }
});

test('a 500 is retried with backoff until the robot accepts', async () => {
  const user = actor('user');
  receiver.statuses.set('/robot/user', [500, 500]);
  const a = await raise({ userId: user.id!, tenantId: cast.tenantA });
  assert.deepEqual(await workflowResult(a.alertId, user.id!), { result: 'delivered', status: 200 });
  assert.deepEqual(
    receiver.about(a.title).map((r) => r.status),
    [500, 500, 200],
  );
  assert.ok(receiver.about(a.title).every((r) => r.verified));
});

test('a 4xx other than 429 is final: one attempt, the workflow fails', async () => {
  const manager = actor('manager');
  receiver.statuses.set('/robot/manager', [400]);
  const a = await raise({ userId: manager.id!, tenantId: cast.tenantA });
  await assert.rejects(workflowResult(a.alertId, manager.id!));
  assert.equal(receiver.about(a.title).length, 1);
});

test('tenant-wide alerts go to their tenant admins; push_enabled and min_severity are honoured', async () => {
  const ta = actor('tenant_admin');
  const tb = actor('other_tenant_admin');
  assert.equal((await putWebhook('tenant_admin', `${receiver.url}/robot/ta`)).status, 200);
  assert.equal((await putWebhook('other_tenant_admin', `${receiver.url}/robot/tb`)).status, 200);
  receiver.secrets.set('/robot/ta', GLOBAL_SECRET);
  receiver.secrets.set('/robot/tb', GLOBAL_SECRET);

  const a = await raise({ userId: null, tenantId: cast.tenantA });
  const recipients = await deliverAlertWebhooks(app.deps, {
    id: a.id,
    alert_id: a.alertId,
    severity: 'critical',
    user_id: null,
    tenant_id: cast.tenantA,
  });
  assert.deepEqual(recipients, [ta.id]);
  await workflowResult(a.alertId, ta.id!);
  assert.deepEqual(
    receiver.about(a.title).map((r) => [r.path, r.verified]),
    [['/robot/ta', true]],
  );
  assert.equal(receiver.about(a.title).filter((r) => r.path === '/robot/tb').length, 0);

  // An alert for one user never goes to anyone else (another tenant's admin included).
  const forUser = {
    id: 0,
    alert_id: 'x',
    severity: 'critical' as const,
    user_id: actor('user').id!,
    tenant_id: cast.tenantA,
  };
  assert.deepEqual(await deliverAlertWebhooks(app.deps, forUser), [actor('user').id]);

  const prefs = notificationPreferencesRepository(app.database.sql);
  const wide = { id: 0, alert_id: 'y', user_id: null, tenant_id: cast.tenantB };
  assert.deepEqual(await deliverAlertWebhooks(app.deps, { ...wide, severity: 'warning' }), [tb.id]);
  assert.deepEqual(await deliverAlertWebhooks(app.deps, { ...wide, severity: 'info' }), [], 'below warning');
  await prefs.put(tb.id!, { email_enabled: true, push_enabled: true, min_severity: 'critical' }, new Date());
  assert.deepEqual(await deliverAlertWebhooks(app.deps, { ...wide, severity: 'warning' }), []);
  assert.deepEqual(await deliverAlertWebhooks(app.deps, { ...wide, severity: 'critical' }), [tb.id]);
  await prefs.put(tb.id!, { email_enabled: true, push_enabled: false, min_severity: 'info' }, new Date());
  assert.deepEqual(await deliverAlertWebhooks(app.deps, { ...wide, severity: 'critical' }), []);
  // The webhook survives a preferences update.
  const v = await call(app.url, 'GET', '/api/alerts/preferences/webhook', { auth: tb.session });
  assert.deepEqual(v.body, { webhook_url: `${receiver.url}/robot/tb`, has_secret: false });
});

test('DELETE removes the webhook; no push is started afterwards', async () => {
  const manager = actor('manager');
  const d = await call(app.url, 'DELETE', '/api/alerts/preferences/webhook', { auth: manager.session });
  assert.equal(d.status, 200);
  assert.deepEqual(d.body, { webhook_url: null, has_secret: false });
  const g = await call(app.url, 'GET', '/api/alerts/preferences/webhook', { auth: manager.session });
  assert.deepEqual(g.body, { webhook_url: null, has_secret: false });
  const alert = {
    id: 0,
    alert_id: 'z',
    severity: 'critical' as const,
    user_id: manager.id!,
    tenant_id: cast.tenantA,
  };
  assert.deepEqual(await deliverAlertWebhooks(app.deps, alert), []);
});

test('no secret appears in any response, log line or workflow history', async () => {
  assert.ok(responses.length > 10);
  const answered = responses.join('\n');
  for (const s of SECRETS) assert.ok(!answered.includes(s), 'no secret in a response');
  const logs = app.logs.join('\n');
  assert.ok(logs.includes('/api/alerts/preferences/webhook'), 'the logs were captured');
  for (const s of SECRETS) assert.ok(!logs.includes(s), 'no secret in the logs');
  const client = await app.deps.temporal.client();
  assert.ok(workflowIds.length >= 6);
  let sawRejection = false;
  for (const id of new Set(workflowIds)) {
    const history = await client.workflow.getHandle(id).fetchHistory();
    const text = JSON.stringify(history, (_k, v) =>
      v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : v,
    );
    assert.ok(text.includes('sendAlertWebhook'), 'the history was decoded');
    if (text.includes('robot webhook answered 400')) sawRejection = true;
    for (const s of SECRETS) assert.ok(!text.includes(s), `no secret in the history of ${id}`);
    assert.ok(!text.includes('access_token'), 'no webhook URL in the history');
  }
  assert.ok(sawRejection, 'failure messages are in the searched histories');
});
