// OTLP ingest from the CLIs (issue 29 item 2) on the real API and database: /v1/logs and /v1/metrics
// take protobuf and JSON, gzip, refuse 401/413/415; a CLI's request event becomes one usage row of the
// token's owner (never of a name in the payload), once however often it is sent, and not at all when
// the proxy already recorded the same call through a gateway key; productivity metrics in delta and
// cumulative form add up to the right totals.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { ingestService } from '../../services/usage/ingest.ts';
import { createTenant, createUser, PASSWORD } from '../support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../support/harness.ts';
import { logsExport, sendOtlp, sumExport } from '../support/otlp.ts';
import { api, login, type Session } from '../support/session.ts';

let app: TestApp;
let admin: Session;
let tenantA: number;
let tenantB: number;
const people: Record<'u' | 'v', { id: number; username: string; session: Session; token: string }> =
  {} as never;

before(async () => {
  app = await startTestApp();
  admin = await login(app.url, ADMIN.username, ADMIN.password);
  tenantA = await createTenant(app, admin);
  tenantB = await createTenant(app, admin);
  for (const [key, tenant] of [
    ['u', tenantA],
    ['v', tenantB],
  ] as const) {
    const user = await createUser(app, admin, { role: 'user', tenant_id: tenant });
    const session = await login(app.url, user.username, PASSWORD);
    const made = await api(app.url, 'POST', '/api/upload-tokens', {
      auth: session,
      body: { name: 'laptop otel' },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    people[key] = { ...user, session, token: made.body.token };
  }
});
after(async () => {
  await app?.close();
});

/** A Claude Code api_request event (its docs' attributes), with identity claims naming `email`. */
const claudeRequest = (at: Date, email: string, over: Record<string, number | string> = {}) =>
  logsExport(
    'claude-code',
    [
      {
        body: 'claude_code.api_request',
        at,
        attributes: {
          'event.name': 'api_request',
          'event.timestamp': at.toISOString(),
          'session.id': `s-${randomUUID()}`,
          'user.email': email,
          model: 'claude-sonnet-4-5',
          input_tokens: 120,
          output_tokens: 45,
          cache_read_tokens: 300,
          cache_creation_tokens: 30,
          cost_usd: 0.0123,
          duration_ms: 2100,
          ...over,
        },
      },
      // Not usage: a prompt event of the same export.
      { body: 'claude_code.user_prompt', at, attributes: { 'event.name': 'user_prompt', prompt_length: 12 } },
    ],
    { 'host.name': 'laptop-1' },
  );

type Row = {
  user_id: number | null;
  tenant_id: number;
  tool_name: string;
  message_source: string;
  model: string | null;
  input_tokens: number;
  output_tokens: number;
  tokens_used: number;
  full_entry: string | null;
};
const otelRows = (userId: number, tool: string) =>
  app.database.sql.query<Row>(
    `SELECT user_id, tenant_id, tool_name, message_source, model, input_tokens, output_tokens, tokens_used, full_entry
     FROM daily_messages WHERE user_id = ? AND tool_name = ? AND message_source = 'otel' ORDER BY id`,
    [userId, tool],
  );

test('without a valid token 401; another content type 415; past the limit 413 (declared or inflated)', async () => {
  const req = claudeRequest(new Date(), 'x@example.com');
  assert.equal((await sendOtlp(app.url, 'logs', req)).status, 401);
  assert.equal((await sendOtlp(app.url, 'logs', req, { token: `svcup_${'A'.repeat(43)}` })).status, 401);
  assert.equal((await sendOtlp(app.url, 'metrics', req, { token: 'not-a-token' })).status, 401);
  const t = people.u.token;
  const plain = await sendOtlp(app.url, 'logs', req, { token: t, as: 'json', contentType: 'text/plain' });
  assert.equal(plain.status, 415);
  const big = await fetch(`${app.url}/v1/logs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t}`, 'content-type': 'application/json' },
    body: Buffer.alloc(5 * 1024 * 1024 + 10, 0x20),
  });
  assert.equal(big.status, 413);
  // 6 MB of spaces gzip to a few KB: refused once the inflated bytes pass the limit.
  const bomb = await fetch(`${app.url}/v1/logs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
    body: gzipSync(Buffer.alloc(6 * 1024 * 1024, 0x20)),
  });
  assert.equal(bomb.status, 413);
  const garbage = await sendOtlp(
    app.url,
    'logs',
    {},
    { token: t, as: 'json', contentType: 'application/json' },
  );
  assert.equal(garbage.status, 200, 'an empty export is a valid one');
  const notJson = await fetch(`${app.url}/v1/logs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t}`, 'content-type': 'application/json' },
    body: '{"resourceLogs": [',
  });
  assert.equal(notJson.status, 400);
});

test('a revoked gateway key or upload token is refused with 401 at /v1/logs and /v1/metrics', async () => {
  // An empty export (valid, adds no usage): what is checked is the credential alone.
  const send = (signal: 'logs' | 'metrics', token: string) =>
    sendOtlp(app.url, signal, {}, { token, as: 'json', contentType: 'application/json' });
  const key = await api(app.url, 'POST', '/api/gateway-keys', {
    auth: people.u.session,
    body: { name: `otlp-${randomUUID().slice(0, 8)}`, provider: 'anthropic' },
  });
  assert.equal(key.status, 201, JSON.stringify(key.body));
  const up = await api(app.url, 'POST', '/api/upload-tokens', {
    auth: people.u.session,
    body: { name: 'revoked otel' },
  });
  assert.equal(up.status, 201, JSON.stringify(up.body));
  for (const token of [key.body.key as string, up.body.token as string])
    assert.equal((await send('logs', token)).status, 200, 'accepted before revocation');

  const revokedKey = await api(app.url, 'DELETE', `/api/gateway-keys/${key.body.id}`, {
    auth: people.u.session,
  });
  assert.equal(revokedKey.status, 204, JSON.stringify(revokedKey.body));
  const revokedUp = await api(app.url, 'DELETE', `/api/upload-tokens/${up.body.upload_token.id}`, {
    auth: people.u.session,
  });
  assert.equal(revokedUp.status, 200, JSON.stringify(revokedUp.body));
  for (const token of [key.body.key as string, up.body.token as string])
    for (const signal of ['logs', 'metrics'] as const)
      assert.equal((await send(signal, token)).status, 401, `${signal} after revocation`);
});

test("a Claude Code logs export (protobuf) is one usage row of the token's owner, once however often it is sent", async () => {
  const at = new Date(Date.now() - 60_000);
  // The payload claims to be V (tenant B): the row is U's all the same.
  const req = claudeRequest(at, `${people.v.username}@example.com`, {
    'user.account_uuid': String(people.v.id),
  });
  const first = await sendOtlp(app.url, 'logs', req, { token: people.u.token });
  assert.equal(first.status, 200);
  assert.match(first.type, /application\/x-protobuf/);
  assert.equal(first.body.length, 0, 'an empty ExportLogsServiceResponse');
  const again = await sendOtlp(app.url, 'logs', req, { token: people.u.token, gzip: true });
  assert.equal(again.status, 200);
  const rows = await otelRows(people.u.id, 'claude-code');
  assert.equal(rows.length, 1, JSON.stringify(rows));
  const row = rows[0]!;
  assert.equal(row.tenant_id, tenantA);
  assert.equal(row.model, 'claude-sonnet-4-5');
  assert.equal(row.input_tokens, 120 + 300 + 30, 'input counts cache reads and writes, as the proxy counts');
  assert.equal(row.output_tokens, 45);
  assert.equal(row.tokens_used, 495);
  const entry = JSON.parse(row.full_entry!);
  assert.equal(entry.cost_usd, 0.0123);
  assert.equal(entry.duration_ms, 2100);
  assert.equal((await otelRows(people.v.id, 'claude-code')).length, 0);
});

test('JSON with gzip: Codex, Gemini CLI and Qwen Code request events, each under its tool', async () => {
  const at = new Date(Date.now() - 120_000);
  const codex = logsExport('codex_cli_rs', [
    {
      at,
      attributes: {
        'event.name': 'codex.sse_event',
        'event.kind': 'response.completed',
        model: 'gpt-5-codex',
        input_token_count: 900,
        output_token_count: 80,
        cached_token_count: 500,
        reasoning_token_count: 20,
        duration_ms: 1500,
      },
    },
    // An SSE event that is not the completed response carries no usage.
    { at, attributes: { 'event.name': 'codex.sse_event', 'event.kind': 'response.output_text.delta' } },
  ]);
  const gemini = logsExport('gemini-cli', [
    {
      at,
      attributes: {
        'event.name': 'gemini_cli.api_response',
        model: 'gemini-2.5-pro',
        status_code: 200,
        duration_ms: 900,
        input_token_count: 1000,
        output_token_count: 50,
        thoughts_token_count: 25,
        cached_content_token_count: 400,
      },
    },
  ]);
  const qwen = logsExport('qwen-code', [
    {
      at,
      attributes: {
        'event.name': 'qwen-code.api_response',
        model: 'qwen3-coder-plus',
        input_token_count: 700,
        output_token_count: 60,
        thoughts_token_count: 10,
      },
    },
  ]);
  for (const req of [codex, gemini, qwen]) {
    const res = await sendOtlp(app.url, 'logs', req, { token: people.u.token, as: 'json', gzip: true });
    assert.equal(res.status, 200);
    assert.match(res.type, /application\/json/);
    assert.deepEqual(JSON.parse(res.body.toString()), {});
  }
  const [c] = await otelRows(people.u.id, 'codex');
  assert.deepEqual([c?.model, c?.input_tokens, c?.output_tokens], ['gpt-5-codex', 900, 80]);
  const [g] = await otelRows(people.u.id, 'gemini-cli');
  assert.deepEqual([g?.model, g?.input_tokens, g?.output_tokens], ['gemini-2.5-pro', 1000, 75]);
  const [q] = await otelRows(people.u.id, 'qwen-code');
  assert.deepEqual([q?.model, q?.input_tokens, q?.output_tokens], ['qwen3-coder-plus', 700, 60]);
});

test('a call the proxy already recorded through a gateway key is not counted again', async () => {
  const at = new Date(Date.now() - 30_000);
  const proxyAt = new Date(at.getTime() - 4_000);
  // The proxy's row of the same call (issue 29 item 1 writes it; inserted here through the ingest).
  await ingestService(app.deps).ingestMessages([
    {
      date: proxyAt.toISOString().slice(0, 10),
      toolName: 'claude-code',
      hostName: 'gateway:laptop',
      messageId: `gw-${randomUUID()}`,
      parentId: null,
      role: 'assistant',
      content: null,
      fullEntry: null,
      tokensUsed: 1000 + 77,
      inputTokens: 1000,
      outputTokens: 77,
      model: 'claude-opus-4-1',
      timestamp: proxyAt,
      senderId: null,
      senderName: people.v.username,
      messageSource: 'gateway',
      conversationId: null,
      agentSessionId: null,
      projectPath: null,
      owner: { userId: people.v.id, tenantId: tenantB },
    },
  ]);
  const sameCall = claudeRequest(at, 'v@example.com', {
    model: 'claude-opus-4-1',
    input_tokens: 900,
    cache_read_tokens: 100,
    cache_creation_tokens: 0,
    output_tokens: 77,
  });
  assert.equal((await sendOtlp(app.url, 'logs', sameCall, { token: people.v.token })).status, 200);
  assert.equal((await otelRows(people.v.id, 'claude-code')).length, 0, 'counted once, by the proxy');
  // Another user's identical call is not the proxy's twin: it counts.
  assert.equal((await sendOtlp(app.url, 'logs', sameCall, { token: people.u.token })).status, 200);
  const uRows = await otelRows(people.u.id, 'claude-code');
  assert.ok(uRows.some((r) => r.model === 'claude-opus-4-1'));
  // And V's call an hour later, with the same counts, is another call.
  const later = claudeRequest(new Date(at.getTime() + 3_600_000), 'v@example.com', {
    model: 'claude-opus-4-1',
    input_tokens: 900,
    cache_read_tokens: 100,
    cache_creation_tokens: 0,
    output_tokens: 77,
  });
  assert.equal((await sendOtlp(app.url, 'logs', later, { token: people.v.token })).status, 200);
  assert.equal((await otelRows(people.v.id, 'claude-code')).length, 1);
});

type Figures = {
  lines_added: number;
  lines_removed: number;
  commits: number;
  active_ms: number;
  tenant_id: number;
};
const figures = async (userId: number, tool: string) => {
  const [row] = await app.database.sql.query<Figures>(
    `SELECT sum(lines_added) AS lines_added, sum(lines_removed) AS lines_removed, sum(commits) AS commits,
            sum(active_ms) AS active_ms, max(tenant_id) AS tenant_id
     FROM otel_productivity_daily WHERE user_id = ? AND tool_name = ?`,
    [userId, tool],
  );
  return {
    lines_added: Number(row?.lines_added ?? 0),
    lines_removed: Number(row?.lines_removed ?? 0),
    commits: Number(row?.commits ?? 0),
    active_ms: Number(row?.active_ms ?? 0),
    tenant_id: Number(row?.tenant_id ?? 0),
  };
};

test('delta metrics add each point once (a retried export adds nothing)', async () => {
  const start = new Date(Date.now() - 600_000);
  const t1 = new Date(start.getTime() + 60_000);
  const t2 = new Date(start.getTime() + 120_000);
  const lines = (at: Date, from: Date, added: number, removed: number) =>
    sumExport('claude-code', 'claude_code.lines_of_code.count', 1, [
      { attributes: { type: 'added', 'session.id': 's1' }, start: from, at, value: added },
      { attributes: { type: 'removed', 'session.id': 's1' }, start: from, at, value: removed },
    ]);
  const tok = people.u.token;
  assert.equal((await sendOtlp(app.url, 'metrics', lines(t1, start, 40, 5), { token: tok })).status, 200);
  assert.equal((await sendOtlp(app.url, 'metrics', lines(t1, start, 40, 5), { token: tok })).status, 200);
  const res = await sendOtlp(app.url, 'metrics', lines(t2, t1, 12, 3), {
    token: tok,
    as: 'json',
    gzip: true,
  });
  assert.equal(res.status, 200);
  assert.deepEqual(JSON.parse(res.body.toString()), {});
  const active = sumExport('claude-code', 'claude_code.active_time.total', 1, [
    { attributes: { type: 'user' }, start, at: t1, value: 30.5 },
    { attributes: { type: 'cli' }, start, at: t1, value: 12.25 },
  ]);
  assert.equal((await sendOtlp(app.url, 'metrics', active, { token: tok })).status, 200);
  const f = await figures(people.u.id, 'claude-code');
  assert.deepEqual([f.lines_added, f.lines_removed, f.active_ms, f.tenant_id], [52, 8, 42_750, tenantA]);
});

test('cumulative metrics add their growth; a restarted process counts from zero again', async () => {
  const start = new Date(Date.now() - 900_000);
  const at = (s: number) => new Date(start.getTime() + s * 1000);
  const commits = (from: Date, when: Date, value: number) =>
    sumExport('claude-code', 'claude_code.commit.count', 2, [{ start: from, at: when, value }]);
  const tok = people.v.token;
  for (const [from, when, value] of [
    [start, at(60), 2],
    [start, at(120), 5],
    [start, at(120), 5], // the same export again
    [start, at(90), 4], // an older point, late
    [at(300), at(360), 1], // the CLI restarted: a new start time, counting from zero
    [at(300), at(420), 3],
  ] as const) {
    assert.equal(
      (await sendOtlp(app.url, 'metrics', commits(from, when, value), { token: tok })).status,
      200,
    );
  }
  const gemini = sumExport('gemini-cli', 'gemini_cli.lines.changed', 2, [
    { attributes: { type: 'added' }, start, at: at(60), value: 10 },
  ]);
  assert.equal((await sendOtlp(app.url, 'metrics', gemini, { token: tok, as: 'json' })).status, 200);
  const later = sumExport('gemini-cli', 'gemini_cli.lines.changed', 2, [
    { attributes: { type: 'added' }, start, at: at(120), value: 25 },
  ]);
  assert.equal((await sendOtlp(app.url, 'metrics', later, { token: tok, as: 'json' })).status, 200);
  const f = await figures(people.v.id, 'claude-code');
  assert.equal(f.commits, 5 + 3, JSON.stringify(f));
  assert.equal(f.tenant_id, tenantB, "the token owner's tenant");
  assert.equal((await figures(people.v.id, 'gemini-cli')).lines_added, 25);
  // Nothing of V's reached U (tenant A).
  assert.equal((await figures(people.u.id, 'gemini-cli')).lines_added, 0);
});

test('the usage report and ROI show the measured figures, and say where the hours saved come from', async () => {
  const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
  const get = (who: Session, path: string, q: Record<string, string> = {}) =>
    api(app.url, 'GET', `${path}?${new URLSearchParams({ start_date: day(-1), end_date: day(0), ...q })}`, {
      auth: who,
    });
  const u = people.u.session;
  const roi = await get(u, '/api/roi');
  assert.equal(roi.status, 200, JSON.stringify(roi.body));
  assert.equal(roi.body.productivity.lines_added, 52);
  assert.equal(roi.body.productivity.lines_removed, 8);
  assert.equal(roi.body.productivity.commits, 0, "V's commits are not U's");
  assert.equal(roi.body.productivity.active_hours, 0.01);
  // Claude Code measured its active time; Codex, Gemini CLI and Qwen Code calls keep the assumption.
  assert.equal(roi.body.totals.hours_saved_source, 'mixed');
  assert.equal(roi.body.totals.hours_saved_measured, 0.01);
  assert.ok(roi.body.totals.hours_saved_assumed > 0);

  const report = await get(u, '/api/usage/report', { group_by: 'tool' });
  assert.equal(report.status, 200, JSON.stringify(report.body));
  const row = (tool: string) => report.body.rows.find((r: { key: string }) => r.key === tool);
  assert.deepEqual(
    [row('claude-code').lines_added, row('claude-code').lines_removed, row('claude-code').active_hours],
    [52, 8, 0.01],
  );
  assert.equal(row('codex').lines_added, null, 'no figures for a CLI that sent none');
  assert.equal(report.body.totals.lines_added, 52);
  const byModel = await get(u, '/api/usage/report', { group_by: 'model' });
  assert.ok(byModel.body.rows.every((r: { lines_added: number | null }) => r.lines_added === null));

  // V (tenant B) sees V's commits and Gemini CLI lines; hours stay assumed (no active time measured).
  const v = await get(people.v.session, '/api/roi');
  assert.equal(v.body.productivity.commits, 8);
  assert.equal(v.body.productivity.lines_added, 25);
  assert.equal(v.body.totals.hours_saved_source, 'assumed');
});

/** An export a real CLI sent (test/fixtures/otlp, captured byte for byte by issue 29 item 3's tooling). */
const captured = (path: string) => readFileSync(new URL(`../fixtures/otlp/${path}`, import.meta.url));

test("the four real CLIs' captured exports: one usage row per call, lines and edit decisions, once", async () => {
  const w = await createUser(app, admin, { role: 'user', tenant_id: tenantA });
  const session = await login(app.url, w.username, PASSWORD);
  const token = (await api(app.url, 'POST', '/api/upload-tokens', { auth: session, body: { name: 'cli' } }))
    .body.token as string;
  const post = async (signal: 'logs' | 'metrics', path: string) => {
    const res = await fetch(`${app.url}/v1/${signal}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': path.endsWith('.pb') ? 'application/x-protobuf' : 'application/json',
      },
      body: new Uint8Array(captured(path)),
    });
    assert.equal(res.status, 200, `${path}: ${await res.text()}`);
  };
  for (let i = 0; i < 2; i++) {
    await post('logs', 'claude-code/01-logs.pb');
    await post('metrics', 'claude-code/02-metrics.pb');
    await post('logs', 'claude-code-json-edit/02-logs.json');
    await post('metrics', 'claude-code-json-edit/03-metrics.json');
    await post('logs', 'codex/02-logs.pb');
    await post('logs', 'gemini-cli/02-logs.json');
    await post('logs', 'qwen-code/03-logs.json');
  }
  const tokens = async (tool: string) =>
    (await otelRows(w.id, tool)).map((r) => [r.model, r.input_tokens, r.output_tokens]);
  // Claude Code: 5 input + 7 cache read + 6 cache write, 8 output (its own turn summary: 5/8/13 cache);
  // one call in the plain capture, two (the Write tool call and the answer) in the edit capture.
  assert.deepEqual(await tokens('claude-code'), [
    ['claude-mock-1', 18, 8],
    ['claude-mock-1', 18, 8],
    ['claude-mock-1', 18, 8],
  ]);
  // Codex logs response.completed twice; only the one with the usage counts.
  assert.deepEqual(await tokens('codex'), [['gpt-mock-1', 13, 9]]);
  assert.deepEqual(await tokens('gemini-cli'), [['gemini-2.5-flash', 15, 12]]);
  assert.deepEqual(await tokens('qwen-code'), [['qwen-mock-1', 11, 7]]);
  const f = await figures(w.id, 'claude-code');
  assert.equal(f.lines_added, 4);
  assert.equal(f.lines_removed, 0);
  assert.equal(f.active_ms, 427 + 591);
  const [d] = await app.database.sql.query<{ a: number }>(
    'SELECT sum(edits_accepted) AS a FROM otel_productivity_daily WHERE user_id = ?',
    [w.id],
  );
  assert.equal(Number(d?.a), 1);
});
