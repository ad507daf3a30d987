// The "Messages" read APIs (issue 10 item 4) on the real API, database and upload path: listing with
// every filter, pagination defaults and caps, full-text search (word match, no match, FTS syntax in
// the search is harmless), counting, senders, conversation history, timeline and details (404 for an
// unknown session and for one outside the caller's tenant alike), tenant isolation of every read, and
// the readonly role refused. Data: read-seed.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TestApp } from '../../support/harness.ts';
import { api } from '../../support/session.ts';
import { get, type Seeded, withSeededApp } from './read-seed.ts';

let app: TestApp;
let s: Seeded;
withSeededApp((a, seeded) => {
  app = a;
  s = seeded;
});

const contents = (body: any) => body.messages.map((m: any) => m.content);
const count = async (who: Seeded['userA'], query: string) =>
  (await get(app, who, `/api/messages/count${query}`)).count;

test('messages: newest first, defaults 50/0, the message shape, tenant scope', async () => {
  const a = await get(app, s.userA, '/api/messages');
  assert.equal(a.limit, 50);
  assert.equal(a.offset, 0);
  assert.equal(a.has_more, false);
  assert.equal(a.messages.length, 7);
  assert.deepEqual(
    a.messages.map((m: any) => m.date),
    [s.today, s.today, s.today, s.today, s.day(-1), s.day(-10), s.day(-40)],
  );
  assert.equal(contents(a).includes('secret parser of tenant b'), false);
  const reply = a.messages.find((m: any) => m.content === 'I refactored the parser module');
  assert.deepEqual(
    { ...reply, id: undefined, user_id: undefined, timestamp: undefined },
    {
      id: undefined,
      message_id: 'm-2',
      parent_id: null,
      date: s.today,
      tool_name: 'tool-x',
      host_name: 'h1',
      role: 'assistant',
      content: 'I refactored the parser module',
      tokens_used: 150,
      input_tokens: 100,
      output_tokens: 50,
      model: 'model-1',
      timestamp: undefined,
      sender_id: null,
      sender_name: s.userA.user.username,
      message_source: null,
      conversation_id: null,
      agent_session_id: 'sess-a1',
      user_id: undefined,
      project_path: null,
      // Extra fields (issue 28 item 5): not flagged by the content filter.
      filter_verdict: null,
      filter_rules: [],
    },
  );
  assert.equal(reply.user_id, s.userA.user.id);
  assert.equal(reply.timestamp, `${s.today}T12:00:00.000Z`);
  assert.deepEqual(contents(await get(app, s.adminB, '/api/messages')).sort(), [
    'secret parser of tenant b',
    'tenant b question',
  ]);
  assert.equal((await get(app, s.admin, '/api/messages')).messages.length, 10);
  assert.deepEqual((await get(app, s.noTenant, '/api/messages')).messages, []);
  assert.equal(await count(s.userA, ''), 7);
  assert.equal(await count(s.adminB, ''), 2);
  assert.equal(await count(s.admin, ''), 10);
  assert.equal(await count(s.noTenant, ''), 0);
});

test('messages: pagination, the limit cap and its 400s', async () => {
  const first = await get(app, s.userA, '/api/messages?limit=2');
  assert.equal(first.messages.length, 2);
  assert.equal(first.has_more, true);
  const last = await get(app, s.userA, '/api/messages?limit=2&offset=6');
  assert.equal(last.messages.length, 1);
  assert.equal(last.has_more, false);
  assert.equal(last.messages[0].content, 'ancient answer');
  const all = await get(app, s.userA, '/api/messages');
  const paged = [];
  for (let offset = 0; offset < 7; offset += 3)
    paged.push(...(await get(app, s.userA, `/api/messages?limit=3&offset=${offset}`)).messages);
  assert.deepEqual(paged, all.messages);
  assert.equal((await get(app, s.userA, '/api/messages?limit=100000')).limit, 500);
  for (const [q, field] of [
    ['limit=0', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=2.5', 'limit'],
    ['offset=-1', 'offset'],
  ])
    assert.match((await get(app, s.userA, `/api/messages?${q}`, 400)).error, new RegExp(`^${field}:`));
});

test('messages and count: every filter, and the date checks naming the parameter', async () => {
  const cases: Array<[string, number]> = [
    [`date=${s.day(-1)}`, 1],
    [`start_date=${s.day(-10)}&end_date=${s.day(-1)}`, 2],
    [`start_date=${s.day(-1)}`, 5],
    [`end_date=${s.day(-10)}`, 2],
    ['role=user', 1],
    ['role=assistant', 5],
    ['tool=tool-y', 1],
    ['host=h2', 1],
    [`sender=${s.userA.user.username}`, 7],
    ['sender=ghost', 0],
    ['tool=tool-x&role=assistant&host=h1', 4],
  ];
  for (const [q, n] of cases) {
    assert.equal((await get(app, s.userA, `/api/messages?${q}`)).messages.length, n, q);
    assert.equal(await count(s.userA, `?${q}`), n, q);
  }
  assert.equal(await count(s.admin, '?sender=ghost'), 1);
  for (const path of ['/api/messages', '/api/messages/count']) {
    assert.match((await get(app, s.userA, `${path}?role=system`, 400)).error, /^role:/);
    assert.match((await get(app, s.userA, `${path}?date=2026-1-1`, 400)).error, /^date:/);
    assert.match((await get(app, s.userA, `${path}?start_date=x`, 400)).error, /^start_date:/);
    assert.match(
      (await get(app, s.userA, `${path}?start_date=${s.today}&end_date=${s.day(-1)}`, 400)).error,
      /^end_date:/,
    );
  }
});

test('messages: full-text search matches words, case-insensitively, inside the scope', async () => {
  const enc = encodeURIComponent;
  assert.deepEqual(contents(await get(app, s.userA, '/api/messages?search=parser')).sort(), [
    'I refactored the parser module',
    'hello world (parser)',
    'please refactor the parser',
  ]);
  assert.equal((await get(app, s.admin, '/api/messages?search=PARSER')).messages.length, 4);
  assert.deepEqual(contents(await get(app, s.adminB, '/api/messages?search=parser')), [
    'secret parser of tenant b',
  ]);
  assert.deepEqual(contents(await get(app, s.userA, `/api/messages?search=${enc('refactored parser')}`)), [
    'I refactored the parser module',
  ]);
  assert.equal((await get(app, s.userA, '/api/messages?search=nomatchword')).messages.length, 0);
  assert.equal((await get(app, s.userA, '/api/messages?search=pars')).messages.length, 0, 'whole words');
  assert.equal(await count(s.userA, '?search=parser&role=assistant'), 2);
  // FTS5 / tsquery syntax in the search is read as words, never as syntax.
  for (const q of ['"parser*', 'parser)', '(parser', '^parser:*', "parser'", 'parser & !|'])
    assert.equal((await get(app, s.userA, `/api/messages?search=${enc(q)}`)).messages.length, 3, q);
  for (const q of ['"*()', 'parser" OR *', 'NEAR(parser', '-', 'a AND NOT b'])
    assert.equal((await get(app, s.userA, `/api/messages?search=${enc(q)}`)).messages.length, 0, q);
  assert.match((await get(app, s.userA, `/api/messages?search=${'x'.repeat(501)}`, 400)).error, /^search:/);
});

test('senders: per tenant, with message counts; host filter', async () => {
  const a = await get(app, s.userA, '/api/senders');
  assert.deepEqual(a.senders, [
    { sender_name: s.userA.user.username, user_id: s.userA.user.id, message_count: 7, last_date: s.today },
  ]);
  assert.deepEqual(
    (await get(app, s.userA, '/api/senders?host=h2')).senders.map((x: any) => x.message_count),
    [1],
  );
  assert.deepEqual(
    (await get(app, s.adminB, '/api/senders')).senders.map((x: any) => x.sender_name),
    [s.adminB.user.username],
  );
  assert.deepEqual(
    (await get(app, s.admin, '/api/senders')).senders.map((x: any) => [x.sender_name, x.message_count]),
    [
      [s.userA.user.username, 7],
      [s.adminB.user.username, 2],
      ['ghost', 1],
    ],
  );
  assert.deepEqual((await get(app, s.noTenant, '/api/senders')).senders, []);
});

test('conversation history: sessions and conversations in the scope, filters, pagination', async () => {
  const a = await get(app, s.userA, '/api/conversation-history');
  assert.equal(a.limit, 50);
  assert.equal(a.offset, 0);
  const byId = Object.fromEntries(a.conversations.map((c: any) => [c.session_id, c]));
  assert.deepEqual(Object.keys(byId).sort(), ['conv-a2', 'sess-a1']);
  assert.equal(byId['sess-a1'].message_count, 2);
  assert.equal(byId['sess-a1'].requests, 1);
  assert.equal(byId['sess-a1'].tokens, 150);
  assert.equal(byId['sess-a1'].tool_name, 'tool-x');
  const y = await get(app, s.userA, '/api/conversation-history?tool=tool-y');
  assert.deepEqual(
    y.conversations.map((c: any) => c.session_id),
    ['conv-a2'],
  );
  const one = await get(app, s.userA, '/api/conversation-history?limit=1');
  assert.equal(one.conversations.length, 1);
  assert.equal(one.has_more, true);
  assert.equal(
    (await get(app, s.userA, `/api/conversation-history?date=${s.day(-1)}`)).conversations.length,
    0,
  );
  assert.deepEqual(
    (await get(app, s.adminB, '/api/conversation-history')).conversations.map((c: any) => c.session_id),
    ['sess-b1'],
  );
  assert.equal((await get(app, s.admin, '/api/conversation-history')).conversations.length, 3);
  assert.deepEqual((await get(app, s.noTenant, '/api/conversation-history')).conversations, []);
  assert.match((await get(app, s.userA, '/api/conversation-history?date=bad', 400)).error, /^date:/);
  assert.match((await get(app, s.userA, '/api/conversation-history?limit=0', 400)).error, /^limit:/);
});

test('conversation timeline and details: in scope 200; unknown and other tenant 404 alike', async () => {
  const t = await get(app, s.userA, '/api/conversation-timeline/sess-a1');
  assert.equal(t.session_id, 'sess-a1');
  assert.equal(t.count, 2);
  assert.deepEqual(
    t.messages.map((m: any) => m.role),
    ['user', 'assistant'],
  );
  assert.equal((await get(app, s.userA, '/api/conversation-timeline/conv-a2')).count, 1);
  const d = await get(app, s.userA, '/api/conversation-details/sess-a1');
  assert.equal(d.message_count, 2);
  assert.equal(d.user_messages, 1);
  assert.equal(d.requests, 1);
  assert.equal(d.total_tokens, 150);
  assert.deepEqual(d.tool_names, ['tool-x']);
  assert.deepEqual(d.models, ['model-1']);
  assert.equal(d.session, null);
  assert.ok(d.started_at < d.last_message_at);
  assert.equal((await get(app, s.admin, '/api/conversation-details/sess-b1')).total_tokens, 1000);

  // A session row without messages, in tenant B.
  await app.database.sql.query(
    `INSERT INTO agent_sessions (session_id, tool_name, tenant_id, title) VALUES ('sess-only-b', 'tool-x', ?, 'B work')`,
    [s.cast.tenantB],
  );
  const onlyB = await get(app, s.adminB, '/api/conversation-details/sess-only-b');
  assert.equal(onlyB.message_count, 0);
  assert.equal(onlyB.session.title, 'B work');
  assert.equal((await get(app, s.adminB, '/api/conversation-timeline/sess-only-b')).count, 0);

  const unknown = await get(app, s.userA, '/api/conversation-details/no-such-session', 404);
  for (const path of ['conversation-timeline', 'conversation-details']) {
    for (const [who, id] of [
      [s.adminB, 'sess-a1'],
      [s.userA, 'sess-b1'],
      [s.userA, 'sess-only-b'],
      [s.noTenant, 'sess-a1'],
      [s.userA, 'no-such-session'],
    ] as const)
      assert.deepEqual(await get(app, who, `/api/${path}/${id}`, 404), unknown, `${path} ${id}`);
  }
});

test('readonly holds no view_messages: every message read is refused; anonymous gets 401', async () => {
  for (const path of [
    '/api/messages',
    '/api/messages/count',
    '/api/senders',
    '/api/conversation-history',
    '/api/conversation-timeline/sess-a1',
    '/api/conversation-details/sess-a1',
  ]) {
    await get(app, s.readonlyA, path, 403);
    assert.equal((await api(app.url, 'GET', path)).status, 401, path);
  }
});
