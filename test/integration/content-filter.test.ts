// The content filter end to end (issue 11 item 1) on the real API, database and Temporal: rule CRUD
// with the spec's defaults, validation (400 naming the field / the pattern problem), tenant scoping
// (tenant admin: global + own, 404 for another tenant's rule, 403 for global rules), POST
// /api/content/check verdicts and its 413, the regex bomb refused or bounded, stats scoped per tenant,
// uploads of blocked messages stored flagged with a content_filter alert, and the model proxy refusing
// a blocked prompt before the provider (official `openai` client) while a clean one passes.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { contentFilterService } from '../../services/content-filter.ts';
import { proxyTokenService } from '../../services/proxy-tokens.ts';
import { type MockProvider, startMockProvider } from '../fixtures/mock-provider.ts';
import { buildCast, type Cast, uniqueName } from '../support/actors.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { api } from '../support/session.ts';

let app: TestApp;
let cast: Cast;
let mock: MockProvider;
// Ends in `z`: the regex-bomb rule `(a+)+$` of the content-check test matches any text ending in `a`,
// so a random word ending in `a` would turn the texts that end with it into `review`.
const word = `forbidden-${randomUUID().slice(0, 6)}z`;

before(async () => {
  app = await startTestApp();
  cast = await buildCast(app);
  mock = await startMockProvider();
});
after(async () => {
  await mock?.close();
  await app?.close();
});

const as = (name: keyof Cast['actors']) => cast.actors[name].session!;
const rules = (who: keyof Cast['actors'], method: string, path = '', body?: unknown) =>
  api(app.url, method, `/api/filter-rules${path}`, { auth: as(who), body });

test('create applies the defaults; invalid input is a 400 naming the field or the pattern problem', async () => {
  const r = await rules('platform_admin', 'POST', '', { pattern: `default-${word}` });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.equal(r.body.type, 'keyword');
  assert.equal(r.body.severity, 'medium');
  assert.equal(r.body.action, 'warn');
  assert.equal(r.body.is_enabled, true);
  assert.equal(r.body.tenant_id, null);
  for (const [body, field] of [
    [{}, /^pattern/],
    [{ pattern: 'x', type: 'glob' }, /^type/],
    [{ pattern: 'x', severity: 'urgent' }, /^severity/],
    [{ pattern: 'x', action: 'drop' }, /^action/],
    [{ pattern: 'x', is_enabled: 'yes' }, /^is_enabled/],
  ] as const) {
    const bad = await rules('platform_admin', 'POST', '', body);
    assert.equal(bad.status, 400);
    assert.match(bad.body.error, field);
  }
  const invalid = await rules('platform_admin', 'POST', '', { pattern: '(abc', type: 'regex' });
  assert.equal(invalid.status, 400);
  assert.match(invalid.body.error, /^pattern: Invalid regex pattern: missing \)/);
  const backref = await rules('platform_admin', 'POST', '', { pattern: '(a)\\1', type: 'regex' });
  assert.equal(backref.status, 400);
  assert.match(backref.body.error, /invalid escape sequence/);
  const nonAdmin = await rules('user', 'POST', '', { pattern: 'x' });
  assert.equal(nonAdmin.status, 403);
  const anon = await api(app.url, 'GET', '/api/filter-rules');
  assert.equal(anon.status, 401);
});

test("tenant scope: a tenant admin manages its own rules, reads global ones, never another tenant's", async () => {
  const own = await rules('tenant_admin', 'POST', '', { pattern: `a-${word}`, action: 'review' });
  assert.equal(own.status, 201);
  assert.equal(own.body.tenant_id, cast.tenantA);
  const other = await rules('other_tenant_admin', 'POST', '', { pattern: `b-${word}` });
  assert.equal(other.body.tenant_id, cast.tenantB);
  const cross = await rules('tenant_admin', 'POST', '', { pattern: 'x', tenant_id: cast.tenantB });
  assert.equal(cross.status, 403);
  const byAdmin = await rules('platform_admin', 'POST', '', {
    pattern: `pa-${word}`,
    tenant_id: cast.tenantB,
  });
  assert.equal(byAdmin.body.tenant_id, cast.tenantB);

  const listA = await rules('tenant_admin', 'GET');
  const tenantsSeen = new Set(listA.body.rules.map((r: any) => r.tenant_id));
  assert.ok(!tenantsSeen.has(cast.tenantB), 'tenant A never sees tenant B rules');
  assert.ok(listA.body.rules.some((r: any) => r.id === own.body.id));
  assert.ok(
    listA.body.rules.some((r: any) => r.tenant_id === null),
    'global rules are visible',
  );
  const all = await rules('platform_admin', 'GET');
  assert.ok(all.body.rules.some((r: any) => r.id === other.body.id));
  assert.ok(all.body.rules.some((r: any) => r.id === own.body.id));

  assert.equal((await rules('tenant_admin', 'PUT', `/${other.body.id}`, { severity: 'high' })).status, 404);
  assert.equal((await rules('tenant_admin', 'DELETE', `/${other.body.id}`)).status, 404);
  assert.equal((await rules('tenant_admin', 'PUT', '/99999999', { severity: 'high' })).status, 404);
  assert.equal((await rules('platform_admin', 'DELETE', '/99999999')).status, 404);
  const global = listA.body.rules.find((r: any) => r.tenant_id === null);
  assert.equal((await rules('tenant_admin', 'PUT', `/${global.id}`, { severity: 'high' })).status, 403);

  const put = await rules('tenant_admin', 'PUT', `/${own.body.id}`, { severity: 'high', is_enabled: false });
  assert.equal(put.status, 200);
  assert.equal(put.body.severity, 'high');
  assert.equal(put.body.is_enabled, false);
  assert.equal(put.body.action, 'review', 'a PUT is partial');
  const badPut = await rules('tenant_admin', 'PUT', `/${own.body.id}`, { type: 'regex', pattern: '(?=x)' });
  assert.equal(badPut.status, 400);
  assert.match(badPut.body.error, /^pattern: /);
  const del = await rules('tenant_admin', 'DELETE', `/${own.body.id}`);
  assert.equal(del.status, 200);
  assert.equal((await rules('tenant_admin', 'DELETE', `/${own.body.id}`)).status, 404);
});

test('content check: verdict order, user scope, 413 over 100 KB, a regex bomb in bounded time', async () => {
  const mk = (who: keyof Cast['actors'], body: unknown) => rules(who, 'POST', '', body);
  await mk('tenant_admin', { pattern: `warn-${word}`, action: 'warn' });
  await mk('tenant_admin', { pattern: `rev-${word}`, action: 'review' });
  await mk('tenant_admin', {
    pattern: `blk-${word}-[0-9]+`,
    type: 'regex',
    action: 'block',
    severity: 'high',
  });
  await mk('other_tenant_admin', { pattern: `onlyb-${word}`, action: 'block' });
  const bomb = await mk('tenant_admin', { pattern: '(a+)+$', type: 'regex', action: 'review' });
  assert.equal(bomb.status, 201, 'RE2 accepts the bomb: it runs in linear time');

  const check = (who: keyof Cast['actors'], content: unknown) =>
    api(app.url, 'POST', '/api/content/check', { auth: as(who), body: { content } });
  assert.equal((await check('user', 'nothing here')).body.verdict, 'clean');
  assert.equal((await check('user', `WARN-${word}`)).body.verdict, 'warn');
  assert.equal((await check('user', `warn-${word} rev-${word}`)).body.verdict, 'review');
  const blocked = await check('user', `rev-${word} blk-${word}-42`);
  assert.equal(blocked.body.verdict, 'blocked');
  const m = blocked.body.matches.find((x: any) => x.action === 'block');
  assert.deepEqual(Object.keys(m).sort(), ['action', 'description', 'rule_id', 'severity', 'type']);
  assert.equal(m.severity, 'high');
  assert.equal((await check('user', `onlyb-${word}`)).body.verdict, 'clean', "tenant B's rule is not A's");
  assert.equal((await check('other_tenant_admin', `onlyb-${word}`)).body.verdict, 'blocked');
  const big = await check('user', `${'a'.repeat(100 * 1024 - 1)}!`);
  assert.equal(big.status, 200, 'the bomb input at the cap answers (linear scan)');
  assert.equal(big.body.verdict, 'clean');
  const tooBig = await check('user', 'x'.repeat(100 * 1024 + 1));
  assert.equal(tooBig.status, 413);
  const missing = await check('user', undefined);
  assert.equal(missing.status, 400);
  assert.match(missing.body.error, /^content/);
  assert.equal((await api(app.url, 'POST', '/api/content/check', { body: { content: 'x' } })).status, 401);
  await rules('tenant_admin', 'DELETE', `/${bomb.body.id}`);
});

test('uploads: a message matching a block rule is stored flagged (not dropped) and raises an alert', async () => {
  const sender = as('user').user.username;
  const tool = uniqueName('cf-tool');
  const body = {
    date: '2026-03-05',
    tool_name: tool,
    messages: [
      {
        message_id: randomUUID(),
        role: 'user',
        content: `please blk-${word}-7 now`,
        sender_name: sender,
        input_tokens: 3,
      },
      {
        message_id: randomUUID(),
        role: 'user',
        content: `warn-${word}`,
        sender_name: sender,
        input_tokens: 1,
      },
      { message_id: randomUUID(), role: 'assistant', content: 'fine', sender_name: sender, output_tokens: 2 },
    ],
  };
  const r = await api(app.url, 'POST', '/api/upload/messages', {
    body,
    headers: { 'x-upload-auth': 'test-upload-key' },
  });
  assert.ok(r.status < 300, JSON.stringify(r.body));
  const rows = await app.database.sql.query<{
    content: string;
    filter_verdict: string | null;
    tenant_id: number;
  }>('SELECT content, filter_verdict, tenant_id FROM daily_messages WHERE tool_name = ? ORDER BY id', [tool]);
  assert.equal(rows.length, 3, 'nothing dropped');
  assert.deepEqual(
    rows.map((x) => x.filter_verdict),
    ['blocked', 'warn', null],
  );
  assert.equal(Number(rows[0]!.tenant_id), cast.tenantA);
  const alerts = await app.database.sql.query<{ severity: string; tenant_id: number; title: string }>(
    "SELECT severity, tenant_id, title FROM alerts WHERE alert_type = 'content_filter' AND tenant_id = ?",
    [cast.tenantA],
  );
  assert.equal(alerts.length, 1);
  assert.equal(alerts[0]!.severity, 'critical', 'severity from the high rule');

  // Issue 28 item 5: GET /api/messages carries the verdict and the rules behind it (extra fields; the
  // spec's stay), and the alert names the blocked message so the alerts page can link to it.
  const listed = await api(
    app.url,
    'GET',
    `/api/messages?tool=${tool}&start_date=2026-03-05&end_date=2026-03-05`,
    {
      auth: cast.admin,
    },
  );
  assert.equal(listed.status, 200);
  const byContent = new Map((listed.body.messages as any[]).map((m) => [m.content, m]));
  const blockedRow = byContent.get(`please blk-${word}-7 now`);
  assert.equal(blockedRow.filter_verdict, 'blocked');
  assert.ok(blockedRow.filter_rules.length >= 1);
  assert.ok(blockedRow.filter_rules.some((x: any) => x.action === 'block' && typeof x.rule_id === 'number'));
  for (const k of ['id', 'message_id', 'date', 'tool_name', 'host_name', 'role', 'content', 'tokens_used'])
    assert.ok(k in blockedRow, `spec field ${k} kept`);
  assert.equal(byContent.get(`warn-${word}`).filter_verdict, 'warn');
  assert.equal(byContent.get('fine').filter_verdict, null);
  assert.deepEqual(byContent.get('fine').filter_rules, []);
  const [alertText] = await app.database.sql.query<{ message: string }>(
    "SELECT message FROM alerts WHERE alert_type = 'content_filter' AND tenant_id = ?",
    [cast.tenantA],
  );
  assert.ok(
    alertText!.message.includes(`2026-03-05/${tool}/${blockedRow.host_name}/${blockedRow.message_id}`),
  );

  // Filter off for tenant B: its blocked words are stored unflagged.
  const off = await api(app.url, 'PUT', `/api/tenants/${cast.tenantB}/settings`, {
    auth: cast.admin,
    body: { content_filter_enabled: false },
  });
  assert.ok(off.status < 300, JSON.stringify(off.body));
  const bUser = as('other_tenant_admin').user.username;
  const toolB = uniqueName('cf-tool-b');
  await api(app.url, 'POST', '/api/upload/messages', {
    body: {
      date: '2026-03-05',
      tool_name: toolB,
      messages: [{ message_id: randomUUID(), role: 'user', content: `onlyb-${word}`, sender_name: bUser }],
    },
    headers: { 'x-upload-auth': 'test-upload-key' },
  });
  const [b] = await app.database.sql.query<{ filter_verdict: string | null }>(
    'SELECT filter_verdict FROM daily_messages WHERE tool_name = ?',
    [toolB],
  );
  assert.equal(b!.filter_verdict, null);
});

test('stats are tenant-scoped: rules, flagged uploads, counters', async () => {
  const a = await api(app.url, 'GET', '/api/content/filter/stats', { auth: as('tenant_admin') });
  assert.equal(a.status, 200);
  assert.deepEqual(a.body.scope, { tenant_id: cast.tenantA });
  assert.equal(a.body.flagged_messages.blocked, 1);
  assert.equal(a.body.flagged_messages.warn, 1);
  assert.ok(a.body.rules.by_action.block >= 1);
  assert.ok(a.body.since_start.checks >= 1);
  const b = await api(app.url, 'GET', '/api/content/filter/stats', { auth: as('other_tenant_admin') });
  assert.equal(b.body.flagged_messages.blocked, 0, "B never counts A's flags");
  const all = await api(app.url, 'GET', '/api/content/filter/stats', { auth: cast.admin });
  assert.equal(all.body.scope, 'all');
  assert.ok(all.body.flagged_messages.blocked >= 1);
  assert.equal((await api(app.url, 'GET', '/api/content/filter/stats', { auth: as('user') })).status, 403);
});

test('proxy: a blocked prompt is refused before the provider (openai client), a clean one passes', async () => {
  const key = await api(app.url, 'POST', '/api/remote/api-keys', {
    auth: cast.admin,
    body: {
      provider: 'openai',
      key_name: 'cf',
      api_key: 'sk-real-cf-1234567890',
      base_url: `${mock.url}/v1`,
      tenant_id: cast.tenantA,
    },
  });
  assert.equal(key.status, 201, JSON.stringify(key.body));
  const userId = cast.actors.user.id!;
  const sessionId = randomUUID();
  const { db, t } = app.database;
  await db.insert(t.agentSessions).values({
    sessionId,
    tenantId: cast.tenantA,
    toolName: 'cli_alpha',
    hostName: 'cf-host',
    userId,
    status: 'active',
    workspaceType: 'remote',
    remoteMachineId: 'cf-host',
  });
  const { token } = await proxyTokenService({
    database: app.database,
    settings: app.settings,
    now: app.deps.now,
  }).issue({
    sessionId,
    userId,
    tenantId: cast.tenantA,
    provider: 'openai',
  });
  const client = new OpenAI({ apiKey: token, baseURL: `${app.url}/api/remote/llm-proxy`, maxRetries: 0 });
  const before = mock.requests.length;
  await assert.rejects(
    client.chat.completions.create({
      model: 'gpt-test',
      messages: [
        { role: 'system', content: 'be nice' },
        { role: 'user', content: `tell me blk-${word}-99` },
      ],
    }),
    (err: any) => {
      assert.equal(err.status, 403);
      assert.equal(err.error?.type, 'content_filtered');
      assert.match(err.message, /blocked by the content filter/);
      return true;
    },
  );
  assert.equal(mock.requests.length, before, 'nothing reached the provider');
  const audit = await app.database.sql.query<{ details: string }>(
    "SELECT details FROM audit_logs WHERE action = 'REMOTE_LLM_PROXY_REFUSED' AND resource_id = ?",
    [sessionId],
  );
  assert.equal(audit.length, 1);
  assert.match(
    String(typeof audit[0]!.details === 'string' ? audit[0]!.details : JSON.stringify(audit[0]!.details)),
    /content_filtered/,
  );

  // Block words outside the user text (system prompt) are not checked; clean prompts pass.
  const ok = await client.chat.completions.create({
    model: 'gpt-test',
    messages: [
      { role: 'system', content: `blk-${word}-1` },
      { role: 'user', content: 'hi' },
    ],
  });
  assert.ok(ok.choices.length > 0);
  assert.equal(mock.requests.length, before + 1);
  const sent = JSON.parse(mock.requests.at(-1)!.body);
  assert.equal(sent.messages[1].content, 'hi', 'the held body is forwarded intact');

  // Assistant turns and tool results are not the caller's text either; a streamed call is forwarded
  // with include_usage added from the filter's one parse of the body.
  const stream = await client.chat.completions.create({
    model: 'gpt-test',
    stream: true,
    messages: [
      { role: 'user', content: 'look it up' },
      {
        role: 'assistant',
        content: `blk-${word}-2`,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: `blk-${word}-3` },
    ],
  });
  let chunks = 0;
  for await (const chunk of stream) {
    assert.equal('usage' in chunk && chunk.usage !== undefined, false, 'the added usage is stripped');
    chunks += 1;
  }
  assert.ok(chunks > 0);
  assert.equal(mock.requests.length, before + 2);
  const streamed = JSON.parse(mock.requests.at(-1)!.body);
  assert.equal(streamed.stream_options?.include_usage, true);
  assert.equal(streamed.messages[2].content, `blk-${word}-3`);
});

test('another instance notices a rule change through the version row; a caller without tenant gets global rules only', async () => {
  // A second service on the same database stands for a second API instance (its own cache).
  const other = contentFilterService({ database: app.database });
  const count = async () => {
    const s = await other.proxyScreen(cast.tenantA);
    return s?.rules.length ?? 0;
  };
  const before = await count();
  assert.ok(before >= 1);
  const r = await rules('tenant_admin', 'POST', '', { pattern: `late-${word}`, action: 'block' });
  assert.equal(r.status, 201);
  await other.syncVersion();
  assert.equal(await count(), before + 1, 'the other instance dropped its compiled rules');
  await rules('tenant_admin', 'PUT', `/${r.body.id}`, { is_enabled: false });
  await other.syncVersion();
  assert.equal(await count(), before);

  // Users without tenant cannot log in; a system admin without tenant checks against global rules.
  const session = as('legacy_admin');
  const g = await rules('platform_admin', 'POST', '', { pattern: `global-${word}`, action: 'block' });
  const check = (content: string) =>
    api(app.url, 'POST', '/api/content/check', { auth: session, body: { content } });
  assert.equal((await check(`warn-${word}`)).body.verdict, 'clean', "tenant A's rules are not applied");
  assert.equal((await check(`global-${word}`)).body.verdict, 'blocked');
  await rules('platform_admin', 'DELETE', `/${g.body.id}`);
});

test('a block matcher a proxied request holds keeps working when the cache is dropped under it', async () => {
  // The proxy holds its tenant's block matcher while it reads the body; a rule write here, or another
  // instance's version bump, drops the cache meanwhile. Freeing the regex engines then failed the
  // request with a 500 (services/content-filter.ts `engines`).
  const svc = contentFilterService({ database: app.database });
  const r = await rules('tenant_admin', 'POST', '', {
    pattern: `held\\d-${word}`,
    type: 'regex',
    action: 'block',
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  try {
    const screen = await svc.proxyScreen(cast.tenantA);
    assert.ok(screen, 'tenant A has block rules');
    svc.invalidate();
    const body = Buffer.from(JSON.stringify({ messages: [{ role: 'user', content: `say held7-${word}` }] }));
    const { matches } = svc.screenProxyBody(screen, body, cast.tenantA);
    assert.ok(
      matches.some((m) => m.rule_id === r.body.id),
      'the held matcher still names the regex rule',
    );
  } finally {
    await rules('tenant_admin', 'DELETE', `/${r.body.id}`);
  }
});

test('many rules (one automaton): overlapping and differently-cased keywords and a regex are all named, in one check', async () => {
  // 70 keyword rules (the automaton from 64 on) and a regex for tenant B; created here, removed at the end.
  const ids: number[] = [];
  const add = async (pattern: string, type = 'keyword') => {
    const r = await rules('other_tenant_admin', 'POST', '', { pattern, type, action: 'block' });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    ids.push(r.body.id);
    return r.body.id as number;
  };
  for (let i = 0; i < 66; i++) await add(`many-${i}-${word}`);
  const outer = await add(`ov-${word}-x`);
  const inner = await add(`ov-${word}`);
  const suffix = await add(`${word}-x`);
  const upper = await add(`MANY-7-${word.toUpperCase()}`);
  const regex = await add(`n\\d{3}-${word}`, 'regex');
  try {
    const check = (content: string) =>
      api(app.url, 'POST', '/api/content/check', { auth: as('other_tenant_admin'), body: { content } });
    const r = await check(`say OV-${word}-X then many-7-${word} and n123-${word}`);
    assert.equal(r.status, 200);
    assert.equal(r.body.verdict, 'blocked');
    const named = r.body.matches.map((m: { rule_id: number }) => m.rule_id);
    assert.deepEqual(
      [...named].sort((x: number, y: number) => x - y),
      [ids[7]!, outer, inner, suffix, upper, regex].sort((x, y) => x - y),
    );
    assert.equal((await check(`many-66-${word} n12-${word}`)).body.verdict, 'clean');
    assert.equal((await check(`no rule here`)).body.verdict, 'clean');
  } finally {
    for (const id of ids) await rules('other_tenant_admin', 'DELETE', `/${id}`);
  }
});
