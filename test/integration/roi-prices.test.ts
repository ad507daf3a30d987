// The ROI price table on the real API and database (issue 11 item 5): GET /api/roi/prices for any
// authenticated user with each row's source, PUT/DELETE by system administrators only, precedence
// admin > config (SVC_PRICING__MODELS) > builtin, validation (400 naming the field), the stored limit,
// audit rows for every write, and the cost figures following the effective table at once.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { MAX_ADMIN_PRICES } from '../../domain/roi/admin-prices.ts';
import { buildCast, type Cast } from '../support/actors.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { api, type Session } from '../support/session.ts';

let app: TestApp;
let cast: Cast;
let root: Session;
const DAY = '2026-05-04';

const prices = (who?: Session) => api(app.url, 'GET', '/api/roi/prices', who ? { auth: who } : {});
const put = (who: Session | undefined, body: unknown) =>
  api(app.url, 'PUT', '/api/roi/prices', { ...(who && { auth: who }), body });
const del = (who: Session | undefined, prefix: string) =>
  api(app.url, 'DELETE', `/api/roi/prices/${encodeURIComponent(prefix)}`, who ? { auth: who } : {});
const row = (b: any, model: string) => b.models.find((m: any) => m.model === model);
const opusCost = async () => {
  const r = await api(app.url, 'GET', `/api/roi/cost-breakdown?start_date=${DAY}&end_date=${DAY}`, {
    auth: root,
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.by_model.find((m: any) => m.model === 'claude-opus-4-1-20250805');
};

before(async () => {
  app = await startTestApp({
    env: {
      SVC_PRICING__MODELS: JSON.stringify({
        'House-LLM': { input: 1, output: 2 },
        'gpt-4o': { input: 9, output: 9 },
      }),
    },
  });
  cast = await buildCast(app);
  root = cast.actors.platform_admin.session!;
  // One assistant message of 1M input + 100k output tokens on claude-opus-4-1 (built-in $15/$75).
  const r = await api(app.url, 'POST', '/api/upload/batch', {
    headers: { 'x-upload-auth': 'test-upload-key' },
    body: {
      messages: [
        {
          message_id: randomUUID(),
          date: DAY,
          tool_name: 'tool-a',
          host_name: 'host-1',
          sender_name: cast.actors.user.session!.user.username,
          role: 'assistant',
          content: 'answer',
          model: 'claude-opus-4-1-20250805',
          input_tokens: 1_000_000,
          output_tokens: 100_000,
          timestamp: `${DAY}T09:00:00Z`,
        },
      ],
    },
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
});
after(async () => {
  await app?.close();
});

test('GET: every authenticated user sees the effective table with sources, currency and as-of date', async () => {
  assert.equal((await prices()).status, 401);
  for (const name of [
    'platform_admin',
    'tenant_admin',
    'manager',
    'user',
    'readonly',
    'other_tenant_admin',
  ] as const) {
    const r = await prices(cast.actors[name].session);
    assert.equal(r.status, 200, name);
    assert.equal(r.body.currency, 'USD');
    assert.equal(r.body.prices_as_of, '2025-11-01');
    assert.deepEqual(r.body.precedence, ['admin', 'config', 'builtin']);
  }
  const b = (await prices(cast.actors.user.session)).body;
  assert.deepEqual(row(b, 'claude-opus-4'), {
    model: 'claude-opus-4',
    input: 15,
    output: 75,
    source: 'builtin',
  });
  assert.deepEqual(row(b, 'house-llm'), { model: 'house-llm', input: 1, output: 2, source: 'config' });
  assert.deepEqual(row(b, 'gpt-4o'), { model: 'gpt-4o', input: 9, output: 9, source: 'config' });
  assert.deepEqual(b.default_price, {
    input: 3,
    output: 15,
    input_source: 'builtin',
    output_source: 'builtin',
  });
  assert.equal(b.admin_overrides, 0);
  const sorted = b.models.map((m: any) => m.model);
  assert.deepEqual(sorted, [...sorted].sort());
});

test('PUT and DELETE: admin > config > builtin, figures follow at once, every write audited', async () => {
  assert.equal((await opusCost()).cost, 22.5); // 1M x $15 + 0.1M x $75
  const r = await put(root, {
    models: {
      'claude-opus-4': { input: 10, output: 50 },
      'gpt-4o': { input: 4, output: 8 },
      'new-model:v2': { input: 0, output: 0.5 },
    },
    default_input_per_million: 2,
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual(row(r.body, 'claude-opus-4'), {
    model: 'claude-opus-4',
    input: 10,
    output: 50,
    source: 'admin',
  });
  assert.deepEqual(row(r.body, 'gpt-4o'), { model: 'gpt-4o', input: 4, output: 8, source: 'admin' });
  assert.deepEqual(row(r.body, 'new-model:v2'), {
    model: 'new-model:v2',
    input: 0,
    output: 0.5,
    source: 'admin',
  });
  assert.deepEqual(r.body.default_price, {
    input: 2,
    output: 15,
    input_source: 'admin',
    output_source: 'builtin',
  });
  const opus = await opusCost();
  assert.equal(opus.cost, 15); // 1M x $10 + 0.1M x $50
  assert.equal(opus.matched, 'claude-opus-4');
  assert.equal(opus.input_price_per_million, 10);

  // A second PUT merges: earlier overrides stay; null clears an overridden default.
  const r2 = await put(cast.actors.legacy_admin.session, {
    models: { 'house-llm': { input: 0.5, output: 1 } },
    default_input_per_million: null,
  });
  assert.equal(r2.status, 200, JSON.stringify(r2.body));
  assert.equal(row(r2.body, 'claude-opus-4').source, 'admin');
  assert.deepEqual(row(r2.body, 'house-llm'), { model: 'house-llm', input: 0.5, output: 1, source: 'admin' });
  assert.deepEqual(r2.body.default_price.input_source, 'builtin');
  assert.equal(r2.body.admin_overrides, 4);

  // DELETE falls back to config (gpt-4o) and builtin (claude-opus-4); a second DELETE is a 404.
  const d1 = await del(root, 'gpt-4o');
  assert.equal(d1.status, 200, JSON.stringify(d1.body));
  assert.deepEqual(row(d1.body, 'gpt-4o'), { model: 'gpt-4o', input: 9, output: 9, source: 'config' });
  const d2 = await del(root, 'claude-opus-4');
  assert.equal(d2.status, 200);
  assert.deepEqual(row(d2.body, 'claude-opus-4'), {
    model: 'claude-opus-4',
    input: 15,
    output: 75,
    source: 'builtin',
  });
  assert.equal((await opusCost()).cost, 22.5);
  const again = await del(root, 'claude-opus-4');
  assert.equal(again.status, 404);
  assert.match(again.body.error, /No admin price override for claude-opus-4/);
  assert.equal((await del(root, 'never-set')).status, 404);

  const audit = await app.database.sql.query<{ action: string; user_id: number; details: string }>(
    "SELECT action, user_id, details FROM audit_logs WHERE action IN ('ROI_PRICES_UPDATE', 'ROI_PRICE_DELETE') ORDER BY id",
  );
  assert.deepEqual(
    audit.map((a) => [a.action, Number(a.user_id)]),
    [
      ['ROI_PRICES_UPDATE', root.user.id],
      ['ROI_PRICES_UPDATE', cast.actors.legacy_admin.id],
      ['ROI_PRICE_DELETE', root.user.id],
      ['ROI_PRICE_DELETE', root.user.id],
    ],
  );
  assert.deepEqual(JSON.parse(audit[0]!.details).models['claude-opus-4'], { input: 10, output: 50 });
  assert.equal(JSON.parse(audit[2]!.details).prefix, 'gpt-4o');
  // Stored as one security_settings row; the security settings API is unaffected by it.
  const stored = await app.database.sql.query<{ v: string }>(
    "SELECT setting_value AS v FROM security_settings WHERE setting_key = 'roi_model_prices'",
  );
  assert.deepEqual(Object.keys(JSON.parse(stored[0]!.v).models).sort(), ['house-llm', 'new-model:v2']);
  const sec = await api(app.url, 'GET', '/api/security-settings', { auth: root });
  assert.equal(sec.status, 200);
  assert.equal(JSON.stringify(sec.body).includes('roi_model_prices'), false);
});

test('only system administrators write: tenant admins, managers, users, other tenants get 403; anonymous 401', async () => {
  const body = { models: { 'claude-opus-4': { input: 0, output: 0 } } };
  for (const name of ['tenant_admin', 'manager', 'user', 'readonly', 'other_tenant_admin'] as const) {
    assert.equal((await put(cast.actors[name].session, body)).status, 403, name);
    assert.equal((await del(cast.actors[name].session, 'house-llm')).status, 403, name);
  }
  assert.equal((await put(undefined, body)).status, 401);
  assert.equal((await del(undefined, 'house-llm')).status, 401);
  const b = (await prices(root)).body;
  assert.equal(row(b, 'claude-opus-4').input, 15);
  assert.equal(row(b, 'house-llm').source, 'admin');
});

test('PUT validation: 400 naming the field', async () => {
  const cases: [unknown, RegExp][] = [
    [{ models: { 'gpt-4o': { input: -1, output: 1 } } }, /^models\.gpt-4o\.input: /],
    [{ models: { 'gpt-4o': { input: '1', output: 1 } } }, /^models\.gpt-4o\.input: /],
    [{ models: { 'gpt-4o': { input: 1 } } }, /^models\.gpt-4o\.output: /],
    [{ models: { 'gpt-4o': { input: 1, output: 1, cache: 1 } } }, /^models\.gpt-4o: /],
    [{ models: { 'GPT-4o': { input: 1, output: 1 } } }, /^models\.GPT-4o: .*1-100 characters/],
    [{ models: { 'has space': { input: 1, output: 1 } } }, /^models\.has space: /],
    [{ models: { ['x'.repeat(101)]: { input: 1, output: 1 } } }, /^models\.x+: /],
    [{ models: { '': { input: 1, output: 1 } } }, /^models\.: /],
    [{ default_input_per_million: -0.5 }, /^default_input_per_million: /],
    [{ default_output_per_million: 'free' }, /^default_output_per_million: /],
    [{ models: {}, unknown: 1 }, /unknown/],
    [{}, /Nothing to update/],
    [
      {
        models: Object.fromEntries(
          Array.from({ length: MAX_ADMIN_PRICES + 1 }, (_, i) => [`m-${i}`, { input: 1, output: 1 }]),
        ),
      },
      /^models: at most 500 entries/,
    ],
  ];
  for (const [body, error] of cases) {
    const r = await put(root, body);
    assert.equal(r.status, 400, JSON.stringify(body).slice(0, 80));
    assert.match(r.body.error, error, JSON.stringify(body).slice(0, 80));
  }
  // Non-finite numbers (1e400 parses to Infinity) and a __proto__ key (dropped before it reaches the
  // schema, or refused by it) are refused.
  for (const [raw, error] of [
    ['{"models":{"gpt-4o":{"input":1e400,"output":1}}}', /^models\.gpt-4o\.input: /],
    ['{"models":{"__proto__":{"input":1,"output":1}}}', /^models\.__proto__: |^Nothing to update/],
  ] as const) {
    const res = await fetch(`${app.url}/api/roi/prices`, {
      method: 'PUT',
      headers: { ...root.headers, 'content-type': 'application/json' },
      body: raw,
    });
    assert.equal(res.status, 400, raw);
    assert.match(((await res.json()) as { error: string }).error, error, raw);
  }
  const bad = await del(root, 'Bad Prefix');
  assert.equal(bad.status, 400);
  assert.match(bad.body.error, /^prefix: /);
  assert.equal(row((await prices(root)).body, 'gpt-4o').input, 9, 'nothing was stored by a refused PUT');
});

test('another instance sees a change within the 5 s cache; the writing one at once', async () => {
  const b = await startTestApp({ testDb: app.testDb, env: { SVC_PRICING__MODELS: '{}' } });
  try {
    const onB = async () =>
      row((await api(b.url, 'GET', '/api/roi/prices', { auth: root })).body, 'zz-cache');
    assert.equal(await onB(), undefined); // primes B's cache
    assert.equal((await put(root, { models: { 'zz-cache': { input: 1, output: 1 } } })).status, 200);
    assert.equal(row((await prices(root)).body, 'zz-cache').source, 'admin');
    assert.equal(await onB(), undefined, 'B still answers from its cache');
    b.clock.advance(5_000);
    assert.deepEqual(await onB(), { model: 'zz-cache', input: 1, output: 1, source: 'admin' });
  } finally {
    await b.close();
  }
});

test('at most 500 overrides are stored in total', async () => {
  const have = (await prices(root)).body.admin_overrides as number;
  const fill = Object.fromEntries(
    Array.from({ length: MAX_ADMIN_PRICES - have }, (_, i) => [`fill-${i}`, { input: 1, output: 1 }]),
  );
  assert.equal((await put(root, { models: fill })).status, 200);
  assert.equal((await prices(root)).body.admin_overrides, MAX_ADMIN_PRICES);
  const over = await put(root, { models: { 'one-more': { input: 1, output: 1 } } });
  assert.equal(over.status, 400);
  assert.match(over.body.error, /^models: at most 500 overrides may be stored/);
  // Changing an existing prefix is not a new entry.
  assert.equal((await put(root, { models: { 'fill-0': { input: 2, output: 2 } } })).status, 200);
  assert.equal((await del(root, 'fill-1')).status, 200);
  assert.equal((await put(root, { models: { 'one-more': { input: 1, output: 1 } } })).status, 200);
});
