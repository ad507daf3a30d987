// The data set of the usage read tests (read-*.test.ts), uploaded through the real upload API so every
// figure is what ingestion really stores. Days are relative to the app's clock (today = T):
//
//   tenant A (sender = the cast's `user`, tool x / host h1 unless said):
//     T    conversation sess-a1: user "please refactor the parser" (0 tokens),
//          assistant "I refactored the parser module" (in 100, out 50)
//     T    system "context note" (0 tokens; not a request)
//     T    tool-y / h2, conversation conv-a2: assistant "hello world (parser)" (in 20, out 10)
//     T-1  assistant "yesterday answer" (in 15, out 5)
//     T-10 assistant "older answer" (in 6, out 4)
//     T-40 assistant "ancient answer" (in 3, out 2)
//   tenant B (sender = the cast's `other_tenant_admin`): T, sess-b1: user "tenant b question",
//          assistant "secret parser of tenant b" (in 600, out 400)
//   unknown sender "ghost" (tenant 1): T, tool-z / h3, assistant "ghost reply" (in 4, out 3)
//   a usage report (tenant 1): T, tool-z / h4, 1000 tokens, request_count 99 (h4 has no messages:
//   its tokens count, its requests do not, rule 3; a report of a day with messages would add nothing)
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { addDays, dayOf } from '../../../domain/usage/read-dates.ts';
import { buildCast, type Cast, createUser, PASSWORD } from '../../support/actors.ts';
import { startTestApp, type TestApp } from '../../support/harness.ts';
import { api, login, type Session } from '../../support/session.ts';

export interface Seeded {
  cast: Cast;
  today: string;
  day: (n: number) => string;
  /** Tenant A's `user` (role user), tenant A's `readonly`, tenant B's admin, platform admin. */
  userA: Session;
  readonlyA: Session;
  adminB: Session;
  admin: Session;
  /** A `user` with no tenant: sees nothing. */
  noTenant: Session;
}

const KEY = { 'x-upload-auth': 'test-upload-key' };

/**
 * The read tests' common start: one app for the whole file, seeded once before its tests (`ready`
 * receives both) and closed after them.
 */
export function withSeededApp(ready: (app: TestApp, s: Seeded) => void): void {
  let app: TestApp | undefined;
  before(async () => {
    app = await startTestApp();
    ready(app, await seed(app));
  });
  after(async () => {
    await app?.close();
  });
}

export async function seed(app: TestApp): Promise<Seeded> {
  const cast = await buildCast(app);
  const today = dayOf(app.clock.now());
  const day = (n: number) => addDays(today, n);
  const userA = cast.actors.user.session!;
  const adminB = cast.actors.other_tenant_admin.session!;
  // Login refuses a user without tenant; a session whose user lost its tenant afterwards (an admin
  // removed it) is the case the read scope `none` exists for.
  const lone = await createUser(app, cast.admin, { role: 'user', tenant_id: cast.tenantA });
  const noTenant = await login(app.url, lone.username, PASSWORD);
  await app.database.sql.query('UPDATE users SET tenant_id = NULL WHERE id = ?', [lone.id]);
  const a = userA.user.username;
  const b = adminB.user.username;
  const at = (d: string, hh: string) => `${d}T${hh}:00:00Z`;
  let n = 0;
  const m = (
    d: string,
    role: string,
    content: string,
    inTok: number,
    outTok: number,
    extra: Record<string, unknown> = {},
  ) => ({
    message_id: `m-${++n}`,
    date: d,
    tool_name: 'tool-x',
    host_name: 'h1',
    role,
    content,
    input_tokens: inTok,
    output_tokens: outTok,
    timestamp: at(d, String(10 + (n % 10)).padStart(2, '0')),
    ...extra,
  });
  const messages = [
    m(today, 'user', 'please refactor the parser', 0, 0, { sender_name: a, agent_session_id: 'sess-a1' }),
    m(today, 'assistant', 'I refactored the parser module', 100, 50, {
      sender_name: a,
      agent_session_id: 'sess-a1',
      model: 'model-1',
    }),
    m(today, 'system', 'context note', 0, 0, { sender_name: a }),
    m(today, 'assistant', 'hello world (parser)', 20, 10, {
      sender_name: a,
      tool_name: 'tool-y',
      host_name: 'h2',
      conversation_id: 'conv-a2',
    }),
    m(day(-1), 'assistant', 'yesterday answer', 15, 5, { sender_name: a }),
    m(day(-10), 'assistant', 'older answer', 6, 4, { sender_name: a }),
    m(day(-40), 'assistant', 'ancient answer', 3, 2, { sender_name: a }),
    m(today, 'user', 'tenant b question', 0, 0, { sender_name: b, agent_session_id: 'sess-b1' }),
    m(today, 'assistant', 'secret parser of tenant b', 600, 400, {
      sender_name: b,
      agent_session_id: 'sess-b1',
    }),
    m(today, 'assistant', 'ghost reply', 4, 3, {
      sender_name: 'ghost',
      tool_name: 'tool-z',
      host_name: 'h3',
    }),
  ];
  const up = await api(app.url, 'POST', '/api/upload/batch', {
    headers: KEY,
    body: {
      messages,
      usage: [{ date: today, tool_name: 'tool-z', host_name: 'h4', tokens_used: 1000, request_count: 99 }],
    },
  });
  assert.equal(up.status, 200, JSON.stringify(up.body));
  assert.equal(up.body.messages.stored, messages.length);
  return {
    cast,
    today,
    day,
    userA,
    readonlyA: cast.actors.readonly.session!,
    adminB,
    admin: cast.admin,
    noTenant,
  };
}

/** GET as `who`, asserting the status; the body. */
export async function get(app: TestApp, who: Session, path: string, status = 200) {
  const r = await api(app.url, 'GET', path, { auth: who });
  assert.equal(r.status, status, `${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}
