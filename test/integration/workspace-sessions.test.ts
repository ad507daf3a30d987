// /api/sessions*: local workspace sessions. Create with the spec defaults and expires_in_hours, the
// tenant's max_sessions_per_user (default 5 and a lowered limit), messages and totals, complete,
// expiry, delete, stats, owner-only access with administrators inside their tenant scope, tenant
// isolation of every read, remote sessions invisible, and projects / user_projects kept from sessions.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { buildCast, type Cast, createTenant, createUser, PASSWORD } from '../support/actors.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { api, login, type Session } from '../support/session.ts';
import { sessionWithoutTenant } from './workspace-support.ts';

let app: TestApp;
let cast: Cast;
let userA: Session;
let peerA: Session;
let adminA: Session;
let adminB: Session;
let platform: Session;
let noTenant: Session;

const newUser = async (tenantId: number, role = 'user') => {
  const u = await createUser(app, cast.admin, { role, tenant_id: tenantId });
  return login(app.url, u.username, PASSWORD);
};

before(async () => {
  app = await startTestApp();
  cast = await buildCast(app);
  userA = await newUser(cast.tenantA);
  peerA = await newUser(cast.tenantA);
  adminA = cast.actors.tenant_admin.session!;
  adminB = cast.actors.other_tenant_admin.session!;
  platform = cast.actors.platform_admin.session!;
  noTenant = await sessionWithoutTenant(app, cast);
});
after(() => app?.close());

const call = (auth: Session | undefined, method: string, path: string, body?: unknown) =>
  api(app.url, method, path, { auth, body });
const open = async (auth: Session, body: Record<string, unknown> = {}) => {
  const r = await call(auth, 'POST', '/api/sessions', { tool_name: 'claude', ...body });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.session;
};
const idsOf = (r: { body: { sessions: { session_id: string }[] } }) =>
  r.body.sessions.map((s) => s.session_id).sort();

test('create: spec defaults, random id, tenant and user from the caller, expiry from expires_in_hours', async () => {
  const before = app.clock.now().getTime();
  const s = await open(userA);
  assert.match(s.session_id, /^[0-9a-f]{32}$/);
  assert.equal(s.session_type, 'chat');
  assert.equal(s.host_name, 'localhost');
  assert.equal(s.status, 'active');
  assert.equal(s.workspace_type, 'local');
  assert.equal(s.tenant_id, cast.tenantA);
  assert.equal(s.user_id, userA.user.id);
  assert.deepEqual([s.context, s.settings, s.title, s.model, s.project_id], [{}, {}, null, null, null]);
  assert.deepEqual([s.total_tokens, s.message_count, s.request_count], [0, 0, 0]);
  const ttl = new Date(s.expires_at).getTime() - before;
  assert.ok(ttl >= 24 * 3_600_000 && ttl < 24 * 3_600_000 + 60_000, `default expiry 24 h (${ttl})`);
  const full = await open(userA, {
    session_type: 'agent',
    title: 'T',
    host_name: 'box',
    context: { repo: 'x', nested: { a: [1] } },
    settings: { temperature: 0.2 },
    model: 'claude-x',
    expires_in_hours: 720,
  });
  assert.deepEqual(
    [full.session_type, full.title, full.host_name, full.context, full.settings, full.model],
    ['agent', 'T', 'box', { repo: 'x', nested: { a: [1] } }, { temperature: 0.2 }, 'claude-x'],
  );
  const [row] = await app.database.sql.query<{ workspace_type: string; tenant_id: number }>(
    'SELECT workspace_type, tenant_id FROM agent_sessions WHERE session_id = ?',
    [full.session_id],
  );
  assert.deepEqual([row!.workspace_type, Number(row!.tenant_id)], ['local', cast.tenantA]);
  assert.notEqual(s.session_id, full.session_id);
  // Tidy up: these two count against userA's limit.
  for (const id of [s.session_id, full.session_id]) await call(userA, 'DELETE', `/api/sessions/${id}`);
});

test('create validation: 400 naming the field; 401 anonymous; a caller without tenant is 403', async () => {
  const cases: [Record<string, unknown>, string][] = [
    [{}, 'tool_name'],
    [{ tool_name: '' }, 'tool_name'],
    [{ tool_name: 'c', expires_in_hours: 0 }, 'expires_in_hours'],
    [{ tool_name: 'c', expires_in_hours: 721 }, 'expires_in_hours'],
    [{ tool_name: 'c', expires_in_hours: 1.5 }, 'expires_in_hours'],
    [{ tool_name: 'c', expires_in_hours: '24' }, 'expires_in_hours'],
    [{ tool_name: 'c', context: [1] }, 'context'],
    [{ tool_name: 'c', settings: 'x' }, 'settings'],
    [{ tool_name: 'c', project_path: '   ' }, 'project_path'],
    [{ tool_name: 'c', project_path: 'p'.repeat(501) }, 'project_path'],
  ];
  for (const [body, field] of cases) {
    const r = await call(userA, 'POST', '/api/sessions', body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.ok(r.body.error.startsWith(`${field}:`), `${JSON.stringify(body)} -> ${r.body.error}`);
  }
  assert.equal((await call(undefined, 'POST', '/api/sessions', { tool_name: 'c' })).status, 401);
  const lone = await call(noTenant, 'POST', '/api/sessions', { tool_name: 'c' });
  assert.deepEqual(
    [lone.status, lone.body.error],
    [403, 'A tenant is required to create a workspace session'],
  );
});

test('max_sessions_per_user: default 5; a lowered tenant limit; completed and expired sessions do not count', async () => {
  const u = await newUser(cast.tenantA);
  for (let i = 0; i < 5; i++) await open(u);
  const sixth = await call(u, 'POST', '/api/sessions', { tool_name: 'c' });
  assert.equal(sixth.status, 429);
  assert.equal(sixth.body.error, 'Active session limit reached: at most 5 active sessions per user');
  assert.deepEqual([sixth.body.max_sessions_per_user, sixth.body.active_sessions], [5, 5]);

  const tenantC = await createTenant(app, cast.admin);
  const q = await call(cast.admin, 'PUT', `/api/tenants/${tenantC}/quota`, { max_sessions_per_user: 2 });
  assert.equal(q.status, 200, JSON.stringify(q.body));
  const c = await newUser(tenantC);
  const [a] = [await open(c), await open(c, { expires_in_hours: 1 })];
  const third = await call(c, 'POST', '/api/sessions', { tool_name: 'c' });
  assert.deepEqual([third.status, third.body.max_sessions_per_user], [429, 2]);
  assert.equal((await call(c, 'POST', `/api/sessions/${a.session_id}/complete`)).status, 200);
  await open(c); // the completed one freed a place
  assert.equal((await call(c, 'POST', '/api/sessions', { tool_name: 'c' })).status, 429);
  app.clock.advance(2 * 3_600_000); // the 1-hour session expires
  await open(c);
  assert.equal((await call(c, 'POST', '/api/sessions', { tool_name: 'c' })).status, 429);

  // Concurrent creations cannot overshoot the limit.
  const d = await newUser(tenantC);
  const burst = await Promise.all(
    Array.from({ length: 6 }, () => call(d, 'POST', '/api/sessions', { tool_name: 'c' })),
  );
  assert.deepEqual(burst.map((r) => r.status).sort(), [201, 201, 429, 429, 429, 429]);
});

test('messages: totals, requests for assistant turns, model; validation; completed and expired sessions refuse', async () => {
  const s = await open(userA, { model: 'm0' });
  const path = `/api/sessions/${s.session_id}/messages`;
  const u = await call(userA, 'POST', path, { role: 'user', content: 'hi', tokens_used: 10 });
  assert.equal(u.status, 201, JSON.stringify(u.body));
  const a = await call(userA, 'POST', path, {
    role: 'assistant',
    content: 'hello',
    tokens_used: 30,
    model: 'm1',
  });
  const sys = await call(userA, 'POST', path, { role: 'system', content: 'x' });
  assert.deepEqual(
    [sys.body.session.total_tokens, sys.body.session.message_count, sys.body.session.request_count],
    [40, 3, 1],
  );
  assert.equal(a.body.session.model, 'm1');
  assert.equal(sys.body.session.model, 'm1', 'a message without model keeps the last one');
  const rows = await app.database.sql.query<{ role: string; tokens_used: number; tenant_id: number }>(
    'SELECT role, tokens_used, tenant_id FROM session_messages WHERE session_id = ? ORDER BY id',
    [s.session_id],
  );
  assert.deepEqual(
    rows.map((r) => [r.role, Number(r.tokens_used), Number(r.tenant_id)]),
    [
      ['user', 10, cast.tenantA],
      ['assistant', 30, cast.tenantA],
      ['system', 0, cast.tenantA],
    ],
  );
  const detail = await call(userA, 'GET', `/api/sessions/${s.session_id}`);
  assert.deepEqual(
    detail.body.messages.map((m: { role: string; content: string }) => [m.role, m.content]),
    [
      ['user', 'hi'],
      ['assistant', 'hello'],
      ['system', 'x'],
    ],
  );
  for (const [body, field] of [
    [{ role: 'bot', content: 'x' }, 'role'],
    [{ role: 'user' }, 'content'],
    [{ role: 'user', content: 'x', tokens_used: -1 }, 'tokens_used'],
    [{ role: 'user', content: 'x', tokens_used: 1.5 }, 'tokens_used'],
  ] as [Record<string, unknown>, string][]) {
    const r = await call(userA, 'POST', path, body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.ok(r.body.error.startsWith(`${field}:`), r.body.error);
  }
  const done = await call(userA, 'POST', `/api/sessions/${s.session_id}/complete`);
  assert.equal(done.status, 200);
  assert.equal(done.body.session.status, 'completed');
  assert.ok(done.body.session.completed_at);
  const late = await call(userA, 'POST', path, { role: 'user', content: 'x' });
  assert.deepEqual([late.status, late.body.error], [409, 'Session is completed']);
  const again = await call(userA, 'POST', `/api/sessions/${s.session_id}/complete`);
  assert.deepEqual([again.status, again.body.error], [409, 'Session is completed']);

  const short = await open(userA, { expires_in_hours: 1 });
  app.clock.advance(3_600_000 + 1000);
  const got = await call(userA, 'GET', `/api/sessions/${short.session_id}`);
  assert.equal(got.body.session.status, 'expired');
  const exp = await call(userA, 'POST', `/api/sessions/${short.session_id}/messages`, {
    role: 'user',
    content: 'x',
  });
  assert.deepEqual([exp.status, exp.body.error], [409, 'Session has expired']);
  assert.equal((await call(userA, 'POST', `/api/sessions/${short.session_id}/complete`)).status, 409);
  for (const id of [s.session_id, short.session_id]) await call(userA, 'DELETE', `/api/sessions/${id}`);
});

test('access: owner, tenant admin of its tenant and system admin; everyone else 404; remote sessions invisible', async () => {
  const s = await open(userA);
  const path = `/api/sessions/${s.session_id}`;
  for (const who of [peerA, adminB, noTenant]) {
    const r = await call(who, 'GET', path);
    assert.deepEqual([r.status, r.body.error], [404, 'Session not found']);
    assert.equal((await call(who, 'POST', `${path}/messages`, { role: 'user', content: 'x' })).status, 404);
    assert.equal((await call(who, 'POST', `${path}/complete`)).status, 404);
    assert.equal((await call(who, 'DELETE', path)).status, 404);
  }
  assert.equal((await call(undefined, 'GET', path)).status, 401);
  assert.equal((await call(adminA, 'GET', path)).status, 200);
  assert.equal((await call(platform, 'GET', path)).status, 200);
  assert.equal(
    (await call(adminA, 'POST', `${path}/messages`, { role: 'user', content: 'by admin' })).status,
    201,
  );

  await app.database.sql.query(
    "INSERT INTO agent_sessions (session_id, tenant_id, tool_name, user_id, workspace_type) VALUES (?, ?, 'claude', ?, 'remote')",
    [`remote-${s.session_id}`, cast.tenantA, userA.user.id],
  );
  assert.equal((await call(userA, 'GET', `/api/sessions/remote-${s.session_id}`)).status, 404);
  const mine = await call(userA, 'GET', '/api/sessions?limit=200');
  assert.ok(!mine.body.sessions.some((x: { session_id: string }) => x.session_id.startsWith('remote-')));

  const del = await call(adminA, 'DELETE', path);
  assert.equal(del.status, 200);
  assert.equal((await call(userA, 'GET', path)).status, 404);
  const left = await app.database.sql.query('SELECT id FROM session_messages WHERE session_id = ?', [
    s.session_id,
  ]);
  assert.equal(left.length, 0, 'messages go with the session');
});

test('list and stats: own for users, tenant for tenant admins, all for system admins, nothing without tenant', async () => {
  const u = await newUser(cast.tenantA);
  const v = await newUser(cast.tenantA);
  const b = await newUser(cast.tenantB);
  const u1 = await open(u, { tool_name: 'codex' });
  const u2 = await open(u, { tool_name: 'claude' });
  const v1 = await open(v);
  const b1 = await open(b);
  await call(u, 'POST', `/api/sessions/${u1.session_id}/messages`, {
    role: 'assistant',
    content: 'x',
    tokens_used: 7,
  });
  await call(u, 'POST', `/api/sessions/${u2.session_id}/complete`);

  const list = await call(u, 'GET', '/api/sessions');
  assert.deepEqual([list.body.limit, list.body.offset, list.body.total], [50, 0, 2]);
  assert.deepEqual(idsOf(list), [u1.session_id, u2.session_id].sort());
  assert.deepEqual(idsOf(await call(u, 'GET', '/api/sessions?status=active')), [u1.session_id]);
  assert.deepEqual(idsOf(await call(u, 'GET', '/api/sessions?status=completed')), [u2.session_id]);
  assert.deepEqual(idsOf(await call(u, 'GET', '/api/sessions?tool_name=codex')), [u1.session_id]);
  const page = await call(u, 'GET', '/api/sessions?limit=1&offset=1');
  assert.deepEqual([page.body.sessions.length, page.body.total], [1, 2]);
  for (const q of ['status=paused', 'limit=0', 'limit=201', 'offset=-1']) {
    const r = await call(u, 'GET', `/api/sessions?${q}`);
    assert.equal(r.status, 400, q);
    assert.ok(r.body.error.startsWith(q.split('=')[0]!), r.body.error);
  }
  const all = (s: Session) => call(s, 'GET', '/api/sessions?limit=200').then(idsOf);
  const tenantAList = await all(adminA);
  assert.ok(tenantAList.includes(u1.session_id) && tenantAList.includes(v1.session_id));
  assert.ok(!tenantAList.includes(b1.session_id), 'tenant A admin never sees tenant B');
  const tenantBList = await all(adminB);
  assert.ok(tenantBList.includes(b1.session_id) && !tenantBList.includes(u1.session_id));
  const everything = await call(platform, 'GET', '/api/sessions?limit=200');
  assert.ok(everything.body.total >= 4);
  const ofPlatform = idsOf(everything);
  assert.ok([u1, v1, b1].every((s) => ofPlatform.includes(s.session_id)) || everything.body.total > 200);
  assert.deepEqual((await call(noTenant, 'GET', '/api/sessions')).body, {
    sessions: [],
    total: 0,
    limit: 50,
    offset: 0,
  });

  const stats = await call(u, 'GET', '/api/sessions/stats');
  assert.equal(stats.status, 200);
  assert.deepEqual(
    { ...stats.body, by_tool: undefined },
    {
      total_sessions: 2,
      active_sessions: 1,
      completed_sessions: 1,
      expired_sessions: 0,
      total_tokens: 7,
      total_messages: 1,
      total_requests: 1,
      by_tool: undefined,
    },
  );
  assert.deepEqual(
    stats.body.by_tool.map((x: { tool_name: string; total_sessions: number }) => [
      x.tool_name,
      x.total_sessions,
    ]),
    [
      ['claude', 1],
      ['codex', 1],
    ],
  );
  const statsA = (await call(adminA, 'GET', '/api/sessions/stats')).body;
  const statsB = (await call(adminB, 'GET', '/api/sessions/stats')).body;
  assert.ok(statsA.total_sessions >= 3, 'tenant admin counts the tenant');
  assert.equal(statsB.total_sessions, 1, 'tenant B counts only its own session');
  const statsNone = (await call(noTenant, 'GET', '/api/sessions/stats')).body;
  assert.deepEqual([statsNone.total_sessions, statsNone.total_tokens, statsNone.by_tool], [0, 0, []]);
  const statsAll = (await call(platform, 'GET', '/api/sessions/stats')).body;
  assert.ok(statsAll.total_sessions >= statsA.total_sessions + statsB.total_sessions);
});

test('projects: a project_path upserts the tenant project (one per tenant and path) and the user counters', async () => {
  const u = await newUser(cast.tenantA);
  const v = await newUser(cast.tenantA);
  const b = await newUser(cast.tenantB);
  const path = `/work/${Date.now()}/app`;
  const s1 = await open(u, { project_path: `${path}/` });
  assert.equal(s1.project_path, path, 'trailing separator removed');
  assert.ok(s1.project_id);
  const s2 = await open(u, { project_path: path });
  const s3 = await open(v, { project_path: `  ${path}` });
  const sb = await open(b, { project_path: path });
  assert.equal(s2.project_id, s1.project_id);
  assert.equal(s3.project_id, s1.project_id, 'shared inside the tenant');
  assert.notEqual(sb.project_id, s1.project_id, 'another tenant gets its own project');
  const projects = await app.database.sql.query<{ tenant_id: number; name: string; created_by: number }>(
    'SELECT tenant_id, name, created_by FROM projects WHERE path = ? ORDER BY id',
    [path],
  );
  assert.deepEqual(
    projects.map((p) => [Number(p.tenant_id), p.name, Number(p.created_by)]),
    [
      [cast.tenantA, 'app', u.user.id],
      [cast.tenantB, 'app', b.user.id],
    ],
  );
  await call(u, 'POST', `/api/sessions/${s1.session_id}/messages`, {
    role: 'user',
    content: 'q',
    tokens_used: 5,
  });
  await call(u, 'POST', `/api/sessions/${s2.session_id}/messages`, {
    role: 'assistant',
    content: 'a',
    tokens_used: 20,
  });
  const counters = async (userId: number) => {
    const [r] = await app.database.sql.query<Record<string, number>>(
      'SELECT total_sessions, total_tokens, total_requests FROM user_projects WHERE user_id = ? AND project_id = ?',
      [userId, s1.project_id],
    );
    return r && [Number(r.total_sessions), Number(r.total_tokens), Number(r.total_requests)];
  };
  assert.deepEqual(await counters(u.user.id), [2, 25, 1]);
  assert.deepEqual(await counters(v.user.id), [1, 0, 0]);

  // Concurrent first sessions for a new path share one project row.
  const fresh = `/work/${Date.now()}/race`;
  const w = await newUser(cast.tenantA);
  const made = await Promise.all([u, v, w].map((s) => open(s, { project_path: fresh })));
  assert.equal(new Set(made.map((s) => s.project_id)).size, 1);
  const rows = await app.database.sql.query('SELECT id FROM projects WHERE path = ?', [fresh]);
  assert.equal(rows.length, 1);
});
