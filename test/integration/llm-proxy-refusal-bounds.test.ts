// The model proxy's quiet edges: the connection warm-up CLIs send to their base URL (Claude Code sends
// `HEAD {ANTHROPIC_BASE_URL}`) is answered without a token and leaves no audit row, while every other
// token-less call is still refused; and refusals of a validly signed token (a stopped session's CLI
// retrying, a tenant without a key) are written to the audit log at most UNAUTHENTICATED_BURST times a
// minute per session and reason, the rest summed up in one AUDIT_SUPPRESSED row.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { UNAUTHENTICATED_BURST, UNAUTHENTICATED_WINDOW_MS } from '../../domain/audit-policy.ts';
import type { KeyProvider } from '../../domain/key-providers.ts';
import { proxyTokenService } from '../../services/proxy-tokens.ts';
import { createTenant, uniqueName } from '../support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../support/harness.ts';
import { login } from '../support/session.ts';

let app: TestApp;
let tenantId: number;
let proxyUrl: string;

before(async () => {
  app = await startTestApp();
  tenantId = await createTenant(app, await login(app.url, ADMIN.username, ADMIN.password));
  proxyUrl = `${app.url}/api/remote/llm-proxy`;
});
after(async () => {
  await app?.close();
});

async function auditRows(action: string) {
  const { db, t } = app.database;
  return db.select().from(t.auditLogs).where(eq(t.auditLogs.action, action));
}

/** A session row in `status` and a proxy token for it (the tenant has no stored key). */
async function sessionToken(status: string, provider: KeyProvider = 'anthropic') {
  const { db, t } = app.database;
  const [user] = await db
    .insert(t.users)
    .values({ username: uniqueName('bound-user'), passwordHash: 'not-a-login', role: 'user', tenantId })
    .returning({ id: t.users.id });
  const sessionId = randomUUID();
  await db.insert(t.agentSessions).values({
    sessionId,
    tenantId,
    toolName: 'cli_beta',
    hostName: 'machine-bounds',
    userId: user!.id,
    status,
    workspaceType: 'remote',
    remoteMachineId: 'machine-bounds',
  });
  const { token } = await proxyTokenService({
    database: app.database,
    settings: app.settings,
    now: app.deps.now,
  }).issue({ sessionId, userId: user!.id, tenantId, provider });
  return { sessionId, token };
}

const call = (token: string) =>
  fetch(`${proxyUrl}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': token, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'hi' }] }),
  });

test('the warm-up HEAD and OPTIONS on the bare prefix answer without a token and are not audited', async () => {
  const before = (await auditRows('REMOTE_LLM_PROXY_REFUSED')).length;
  for (const url of [proxyUrl, `${proxyUrl}/`, `${proxyUrl}?beta=true`]) {
    const head = await fetch(url, { method: 'HEAD' });
    assert.equal(head.status, 200, `HEAD ${url}`);
    const options = await fetch(url, { method: 'OPTIONS' });
    assert.equal(options.status, 204, `OPTIONS ${url}`);
    assert.match(options.headers.get('allow') ?? '', /POST/);
  }
  assert.equal((await auditRows('REMOTE_LLM_PROXY_REFUSED')).length, before, 'no audit row');

  // Everything else still needs a token and is refused (and audited) without one.
  for (const [method, path] of [
    ['HEAD', '/v1/messages'],
    ['GET', ''],
    ['POST', ''],
  ] as const) {
    const r = await fetch(`${proxyUrl}${path}`, { method });
    assert.equal(r.status, 401, `${method} ${path || '(bare)'}`);
  }
  assert.equal((await auditRows('REMOTE_LLM_PROXY_REFUSED')).length, before + 3);
});

test('refusals of a valid token are audited at most a burst a minute per session and reason', async () => {
  const stopped = await sessionToken('stopped');
  const extra = 5;
  for (let i = 0; i < UNAUTHENTICATED_BURST + extra; i++) {
    const r = await call(stopped.token);
    assert.equal(r.status, 401);
    await r.arrayBuffer();
  }
  const ofSession = async (sessionId: string) =>
    (await auditRows('REMOTE_LLM_PROXY_REFUSED')).filter((r) => r.resourceId === sessionId);
  const written = await ofSession(stopped.sessionId);
  assert.equal(written.length, UNAUTHENTICATED_BURST, 'the burst is written, the rest held back');
  assert.ok(written.every((r) => JSON.parse(r.details!).reason === 'session_inactive'));
  assert.ok(
    written.every((r) => r.userId !== null),
    'the refusals name the token user',
  );

  // Another session, and another reason of any session, have budgets of their own.
  const other = await sessionToken('stopped');
  assert.equal((await call(other.token)).status, 401);
  assert.equal((await ofSession(other.sessionId)).length, 1);
  const active = await sessionToken('active');
  const noKey = await call(active.token);
  assert.equal(noKey.status, 400, 'no stored key for the provider');
  assert.equal(JSON.parse((await ofSession(active.sessionId))[0]!.details!).reason, 'no_key');

  // A minute later the window closes: the held-back count is summed up, and refusals are written again.
  app.clock.advance(UNAUTHENTICATED_WINDOW_MS + 1000);
  assert.equal((await call(stopped.token)).status, 401);
  assert.equal((await ofSession(stopped.sessionId)).length, UNAUTHENTICATED_BURST + 1);
  const summaries = (await auditRows('AUDIT_SUPPRESSED'))
    .map((r) => JSON.parse(r.details!))
    .filter((d) => d.source === `${stopped.sessionId}:session_inactive`);
  assert.equal(summaries.length, 1);
  assert.equal(summaries[0].action, 'REMOTE_LLM_PROXY_REFUSED');
  assert.equal(summaries[0].suppressed, extra);
});
