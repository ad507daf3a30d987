// Personal upload tokens (issue 25 item 5; finding: "the one shared upload key plus a self-declared
// sender_name writes as any user of any tenant"). Proves on the real API and database: a token is shown
// once and never listed; rows uploaded with it count for its owner whatever their sender fields say
// (messages, batches and usage reports, through X-Upload-Auth and Authorization: Bearer); revoked,
// expired and deactivated-owner tokens are refused; only the owner, a tenant administrator of its
// tenant or a system administrator may revoke it (anyone else 404); the shared key can be switched off.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { createTenant, createUser, PASSWORD } from '../support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../support/harness.ts';
import { api, login, type Session } from '../support/session.ts';

let app: TestApp;
let admin: Session;
let tenantA: number;
let tenantB: number;
/** U: the token owner (tenant A); V: a user of tenant B named in the rows; W: another user of tenant A. */
const people: Record<
  'u' | 'v' | 'w' | 'adminA' | 'adminB',
  { id: number; username: string; session: Session }
> = {} as never;
const SHARED = { 'x-upload-auth': 'test-upload-key' };

before(async () => {
  app = await startTestApp();
  admin = await login(app.url, ADMIN.username, ADMIN.password);
  tenantA = await createTenant(app, admin);
  tenantB = await createTenant(app, admin);
  const specs = [
    ['u', 'user', tenantA],
    ['v', 'user', tenantB],
    ['w', 'user', tenantA],
    ['adminA', 'tenant_admin', tenantA],
    ['adminB', 'tenant_admin', tenantB],
  ] as const;
  for (const [key, role, tenant] of specs) {
    const u = await createUser(app, admin, { role, tenant_id: tenant });
    people[key] = { ...u, session: await login(app.url, u.username, PASSWORD) };
  }
});
after(async () => {
  await app?.close();
});

const create = (who: Session, body: Record<string, unknown>) =>
  api(app.url, 'POST', '/api/upload-tokens', { auth: who, body });
const upload = (path: string, body: unknown, headers: Record<string, string>) =>
  api(app.url, 'POST', path, { body, headers });
const message = (senderName: string, tool: string) => ({
  date: '2026-03-02',
  tool_name: tool,
  host_name: 'laptop',
  message_id: randomUUID(),
  role: 'assistant',
  sender_name: senderName,
  input_tokens: 7,
  output_tokens: 3,
  timestamp: '2026-03-02T10:00:00Z',
});
const stored = (tool: string) =>
  app.database.sql.query<{ user_id: number | null; tenant_id: number }>(
    'SELECT user_id, tenant_id FROM daily_messages WHERE tool_name = ? ORDER BY id',
    [tool],
  );

test('a token is shown once: created with a prefix hint, listed without the token or its hash', async () => {
  const made = await create(people.u.session, { name: 'laptop collector', expires_in_days: 30 });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const token: string = made.body.token;
  assert.match(token, /^svcup_[A-Za-z0-9_-]{43}$/);
  assert.equal(made.body.upload_token.prefix, token.slice(0, 12));
  assert.equal(made.body.upload_token.status, 'active');
  assert.equal(made.body.upload_token.user_id, people.u.id);
  assert.ok(made.body.upload_token.expires_at);
  const listed = await api(app.url, 'GET', '/api/upload-tokens', { auth: people.u.session });
  assert.equal(listed.status, 200);
  const mine = listed.body.upload_tokens.find((t: { id: number }) => t.id === made.body.upload_token.id);
  assert.equal(mine.name, 'laptop collector');
  assert.equal(mine.last_used_at, null);
  const text = JSON.stringify(listed.body);
  assert.ok(!text.includes(token) && !text.includes(token.slice(12)), 'the token is never listed');
  assert.ok(!text.includes('hash'), 'nor its hash');
  // Another user's list does not show it.
  const theirs = await api(app.url, 'GET', '/api/upload-tokens', { auth: people.w.session });
  assert.ok(!theirs.body.upload_tokens.some((t: { id: number }) => t.id === mine.id));
  const { db, t } = app.database;
  const audits = await db.select().from(t.auditLogs).where(eq(t.auditLogs.action, 'UPLOAD_TOKEN_CREATE'));
  assert.ok(audits.some((a) => a.resourceId === String(mine.id)));
  assert.ok(!JSON.stringify(audits).includes(token), 'the audit record does not hold the token');
});

test("rows sent with U's token count for U whatever sender_name says (V of another tenant)", async () => {
  const { body } = await create(people.u.session, { name: 'cron' });
  const token: string = body.token;
  const tool = `tool-${randomUUID().slice(0, 8)}`;
  // The shared key attributes by sender_name: that is the behaviour a personal token must not have.
  const batch = await upload(
    '/api/upload/batch',
    { messages: [message(people.v.username, tool)] },
    {
      'x-upload-auth': token,
    },
  );
  assert.equal(batch.status, 200, JSON.stringify(batch.body));
  const viaMessages = await upload(
    '/api/upload/messages',
    {
      date: '2026-03-02',
      tool_name: tool,
      messages: [{ ...message(people.v.username, tool), date: undefined }],
    },
    { authorization: `Bearer ${token}` },
  );
  assert.equal(viaMessages.status, 200, JSON.stringify(viaMessages.body));
  const rows = await stored(tool);
  assert.equal(rows.length, 2);
  for (const r of rows) assert.deepEqual([Number(r.user_id), Number(r.tenant_id)], [people.u.id, tenantA]);
  const quota = await app.database.sql.query<{ user_id: number; tokens_used: number }>(
    "SELECT user_id, tokens_used FROM quota_usage WHERE period = 'daily' AND date = '2026-03-02' AND user_id IN (?, ?)",
    [people.u.id, people.v.id],
  );
  assert.deepEqual(
    quota.map((q) => [Number(q.user_id), Number(q.tokens_used)]),
    [[people.u.id, 20]],
    "U's quota is charged, V's untouched",
  );
  // A usage report lands in the owner's tenant, not tenant 1.
  const usage = await upload(
    '/api/upload/usage',
    { date: '2026-03-02', tool_name: tool, host_name: 'laptop', tokens_used: 500 },
    { 'x-upload-auth': token },
  );
  assert.equal(usage.status, 200, JSON.stringify(usage.body));
  const [u] = await app.database.sql.query<{ tenant_id: number }>(
    'SELECT tenant_id FROM usage_uploads WHERE tool_name = ?',
    [tool],
  );
  assert.equal(Number(u!.tenant_id), tenantA);
  const listed = await api(app.url, 'GET', '/api/upload-tokens', { auth: people.u.session });
  assert.ok(
    listed.body.upload_tokens.find((t: { id: number }) => t.id === body.upload_token.id).last_used_at,
  );
});

test('a revoked or expired token, or one of a deactivated owner or a suspended tenant, is refused and stores nothing', async () => {
  const tool = `tool-${randomUUID().slice(0, 8)}`;
  const send = (token: string) =>
    upload('/api/upload/batch', { messages: [message(people.u.username, tool)] }, { 'x-upload-auth': token });

  const revoked = await create(people.u.session, { name: 'old laptop' });
  const del = await api(app.url, 'DELETE', `/api/upload-tokens/${revoked.body.upload_token.id}`, {
    auth: people.u.session,
  });
  assert.equal(del.status, 200, JSON.stringify(del.body));
  assert.equal(del.body.upload_token.status, 'revoked');
  const r1 = await send(revoked.body.token);
  assert.equal(r1.status, 401);
  assert.equal(r1.body.error, 'This upload token has been revoked');

  const expiring = await create(people.u.session, { name: 'short', expires_in_days: 1 });
  assert.equal((await send(expiring.body.token)).status, 200, 'valid before its expiry');
  // Its expiry passes (moved in the database: advancing the clock a day would end the login sessions).
  const { db, t } = app.database;
  await db
    .update(t.uploadTokens)
    .set({ expiresAt: new Date(app.clock.now().getTime() - 1000) })
    .where(eq(t.uploadTokens.id, expiring.body.upload_token.id));
  const r2 = await send(expiring.body.token);
  assert.equal(r2.status, 401);
  assert.equal(r2.body.error, 'This upload token has expired');

  const unknown = await send(`svcup_${'A'.repeat(43)}`);
  assert.equal(unknown.status, 403);
  assert.equal(unknown.body.error, 'Invalid upload token');

  const w = await create(people.w.session, { name: 'w' });
  await db.update(t.users).set({ isActive: false }).where(eq(t.users.id, people.w.id));
  try {
    const r3 = await send(w.body.token);
    assert.equal(r3.status, 403);
    assert.equal(r3.body.error, "This upload token's owner is deactivated");
  } finally {
    await db.update(t.users).set({ isActive: true }).where(eq(t.users.id, people.w.id));
  }
  const live = await create(people.u.session, { name: 'live' });
  await db.update(t.tenants).set({ status: 'suspended' }).where(eq(t.tenants.id, tenantA));
  try {
    const r4 = await send(live.body.token);
    assert.equal(r4.status, 403);
    assert.match(r4.body.error, /is suspended/);
  } finally {
    await db.update(t.tenants).set({ status: 'active' }).where(eq(t.tenants.id, tenantA));
  }
  assert.equal((await stored(tool)).length, 1, 'only the upload before the expiry was stored');
  const refused = await db.select().from(t.auditLogs).where(eq(t.auditLogs.action, 'UPLOAD_TOKEN_REFUSED'));
  assert.ok(refused.length >= 3, 'refused uses are audited');
});

test("another user cannot revoke U's token (404); U's tenant admin and a system admin can", async () => {
  const one = await create(people.u.session, { name: 'one' });
  const two = await create(people.u.session, { name: 'two' });
  const path = (id: number) => `/api/upload-tokens/${id}`;
  for (const who of [people.w, people.v, people.adminB]) {
    const r = await api(app.url, 'DELETE', path(one.body.upload_token.id), { auth: who.session });
    assert.equal(r.status, 404, who.username);
  }
  assert.equal((await api(app.url, 'DELETE', path(999_999), { auth: people.u.session })).status, 404);
  // Still usable after the refused revocations.
  const ok = await upload(
    '/api/upload/batch',
    { messages: [message(people.u.username, `tool-${randomUUID().slice(0, 8)}`)] },
    { 'x-upload-auth': one.body.token },
  );
  assert.equal(ok.status, 200);
  // Tenant admins list their tenant's tokens; a plain user may not.
  assert.equal(
    (await api(app.url, 'GET', '/api/upload-tokens?scope=tenant', { auth: people.w.session })).status,
    403,
  );
  const tenantList = await api(app.url, 'GET', '/api/upload-tokens?scope=tenant', {
    auth: people.adminA.session,
  });
  assert.equal(tenantList.status, 200);
  assert.ok(tenantList.body.upload_tokens.some((t: { id: number }) => t.id === one.body.upload_token.id));
  assert.ok(tenantList.body.upload_tokens.every((t: { tenant_id: number }) => t.tenant_id === tenantA));
  const otherTenant = await api(app.url, 'GET', '/api/upload-tokens?scope=tenant', {
    auth: people.adminB.session,
  });
  assert.ok(!otherTenant.body.upload_tokens.some((t: { id: number }) => t.id === one.body.upload_token.id));
  const byTenantAdmin = await api(app.url, 'DELETE', path(one.body.upload_token.id), {
    auth: people.adminA.session,
  });
  assert.equal(byTenantAdmin.status, 200);
  const bySystemAdmin = await api(app.url, 'DELETE', path(two.body.upload_token.id), { auth: admin });
  assert.equal(bySystemAdmin.status, 200);
  const { db, t } = app.database;
  const revokes = await db.select().from(t.auditLogs).where(eq(t.auditLogs.action, 'UPLOAD_TOKEN_REVOKE'));
  assert.ok(revokes.filter((a) => !a.success).length >= 3, 'refused revocations are audited');
});

test('the shared key can be switched off (SVC_UPLOAD_SHARED_KEY=off); personal tokens keep working', async () => {
  const tool = `tool-${randomUUID().slice(0, 8)}`;
  const { body } = await create(people.u.session, { name: 'switch' });
  const saved = app.deps.settings.SVC_UPLOAD_SHARED_KEY;
  app.deps.settings.SVC_UPLOAD_SHARED_KEY = 'off';
  try {
    const shared = await upload(
      '/api/upload/batch',
      { messages: [message(people.v.username, tool)] },
      SHARED,
    );
    assert.equal(shared.status, 403);
    assert.match(shared.body.error, /SVC_UPLOAD_SHARED_KEY=off/);
    const personal = await upload(
      '/api/upload/batch',
      { messages: [message(people.v.username, tool)] },
      {
        'x-upload-auth': body.token,
      },
    );
    assert.equal(personal.status, 200);
  } finally {
    app.deps.settings.SVC_UPLOAD_SHARED_KEY = saved;
  }
  const on = await upload('/api/upload/batch', { messages: [message(people.v.username, tool)] }, SHARED);
  assert.equal(on.status, 200, 'the shared key works while on (trusted collectors)');
  const rows = await stored(tool);
  assert.deepEqual(
    rows.map((r) => Number(r.user_id)),
    [people.u.id, people.v.id],
    'personal token: its owner; shared key: the named sender',
  );
});
