// Helpers for tests that take access away from running remote sessions (assignment revocation, machine
// deletion, tenant hard delete, token lifetimes): a key at the mock provider, a session's live proxy
// token read from its sealed start command, a call through the proxy with it, and the audit rows of
// sessions stopped by a teardown.
import assert from 'node:assert/strict';
import { and, desc, eq } from 'drizzle-orm';
import { openPayload } from '../../domain/remote-command-payload.ts';
import { storageKey } from '../../services/secrets.ts';
import type { MockProvider } from '../fixtures/mock-provider.ts';
import { uniqueName } from './actors.ts';
import type { TestApp } from './harness.ts';
import { api, type Session } from './session.ts';

/** Stores an OpenAI-compatible key for the tenant (system admin), pointing at the mock provider. */
export async function storeMockKey(app: TestApp, admin: Session, tenantId: number, mock: MockProvider) {
  const r = await api(app.url, 'POST', '/api/remote/api-keys', {
    auth: admin,
    body: {
      provider: 'openai',
      key_name: uniqueName('key'),
      api_key: 'sk-real-teardown-test-key',
      base_url: `${mock.url}/v1`,
      tenant_id: tenantId,
    },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
}

/** The proxy token handed to the agent in the session's most recent start or rotate command. */
export async function proxyTokenOf(app: TestApp, sessionId: string): Promise<string> {
  const { db, t } = app.database;
  const c = t.remoteRuntimeCommands;
  const rows = await db.select().from(c).where(eq(c.sessionId, sessionId)).orderBy(desc(c.id));
  const carrying = rows.find(
    (r) => r.commandType === 'session.start' || r.commandType === 'session.rotate_token',
  );
  assert.ok(carrying, `a start command for ${sessionId}`);
  return openPayload(carrying.payload, storageKey(app.settings)).proxy_token as string;
}

/** One chat completion through the model proxy with the token, as the CLI would send it. */
export async function proxyChat(app: TestApp, token: string): Promise<{ status: number; body: any }> {
  const r = await fetch(`${app.url}/api/remote/llm-proxy/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: r.status, body: await r.json().catch(() => null) };
}

/** The REMOTE_SESSION_STOP audit rows of a session, details parsed. */
export async function teardownAudits(app: TestApp, sessionId: string) {
  const { db, t } = app.database;
  const rows = await db
    .select()
    .from(t.auditLogs)
    .where(and(eq(t.auditLogs.action, 'REMOTE_SESSION_STOP'), eq(t.auditLogs.resourceId, sessionId)));
  return rows.map((r) => ({ ...r, details: JSON.parse(r.details ?? '{}') }));
}

/** The session's row status and whether every proxy token it ever had is revoked. */
export async function sessionState(app: TestApp, sessionId: string) {
  const { db, t } = app.database;
  const [row] = await db.select().from(t.agentSessions).where(eq(t.agentSessions.sessionId, sessionId));
  const tokens = await db.select().from(t.proxyTokens).where(eq(t.proxyTokens.sessionId, sessionId));
  return {
    status: row?.status,
    tokens: tokens.length,
    allRevoked: tokens.length > 0 && tokens.every((tk) => tk.revokedAt !== null),
  };
}
