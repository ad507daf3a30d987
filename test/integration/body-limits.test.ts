// Request bodies before authentication (issue 25 item 4, api/middleware/body.ts): ordinary routes
// take 1 MB of JSON and never inflate; a compressed body on an unauthenticated route is refused with
// 415 before it is read (the request is still open when the answer comes); the streamed uploads
// inflate only after their key check, bounded by decoded size and inflation ratio; the routes that
// need more than 1 MB take it after their authentication.
// store-independent: the HTTP edge's body limits and decompression
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { COMPRESSED_BODY_REFUSED, MAX_INFLATION_RATIO } from '../../api/middleware/body.ts';
import { createTenant, createUser } from '../support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../support/harness.ts';
import { api, login } from '../support/session.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp({ worker: false });
});
after(() => app?.close());

/** 20 MB of JSON whitespace inside an envelope, gzipped to about 20 KB (a ratio near 1000). */
const BOMB = gzipSync(
  Buffer.concat([Buffer.from('{"usage": ['), Buffer.alloc(20 * 1024 * 1024, 0x20), Buffer.from(']}')]),
);

/**
 * Sends the headers and the first `sent` bytes of `body` and NEVER the rest: an answer can only come
 * from a server that decided without reading (or inflating) the body.
 */
function answerBeforeBody(
  path: string,
  headers: Record<string, string>,
  body: Buffer,
  sent = 1024,
): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(path, app.url), {
      method: 'POST',
      headers: { 'content-length': String(body.length), ...headers },
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : null });
      });
    });
    req.on('error', reject);
    req.write(body.subarray(0, sent));
  });
}

const gzipJson = { 'content-type': 'application/json', 'content-encoding': 'gzip' };

test('a gzip body on an unauthenticated route is refused with 415 before it is read', async () => {
  assert.ok(BOMB.length < 64 * 1024, `the bomb is small (${BOMB.length} bytes)`);
  for (const path of ['/api/auth/login', '/api/remote/agent/register', '/api/remote/machines/register']) {
    const r = await answerBeforeBody(path, gzipJson, BOMB);
    assert.equal(r.status, 415, path);
    assert.deepEqual(r.body, { error: COMPRESSED_BODY_REFUSED }, path);
  }
  // The SAML ACS (a form post, parsed before any assertion is checked) does not inflate either.
  const acs = await answerBeforeBody(
    '/api/sso/acs/anything',
    { 'content-type': 'application/x-www-form-urlencoded', 'content-encoding': 'deflate' },
    BOMB,
  );
  assert.equal(acs.status, 415);
  assert.deepEqual(acs.body, { error: COMPRESSED_BODY_REFUSED });
});

test('ordinary routes take at most 1 MB of JSON, refused by its Content-Length before reading', async () => {
  const big = Buffer.from(JSON.stringify({ username: 'x', password: 'p'.repeat(1024 * 1024) }));
  const r = await answerBeforeBody('/api/auth/login', { 'content-type': 'application/json' }, big);
  assert.equal(r.status, 413);
  assert.equal(r.body.error, 'Request body too large (limit 1 MB)');
});

test('uploads: no key, no inflation; with the key gzip works and a bomb stops at the ratio cap', async () => {
  for (const path of ['/api/upload/batch', '/api/upload/messages']) {
    const r = await answerBeforeBody(path, gzipJson, BOMB);
    assert.equal(r.status, 401, path);
    assert.match(r.body.error, /^X-Upload-Auth header required/);
  }
  const key = { 'x-upload-auth': 'test-upload-key' };
  const tool = `gz-${Date.now()}`;
  const rows = { usage: [{ date: '2026-04-08', tool_name: tool, tokens_used: 10, request_count: 1 }] };
  const ok = await fetch(`${app.url}/api/upload/batch`, {
    method: 'POST',
    headers: { ...gzipJson, ...key },
    body: gzipSync(JSON.stringify(rows)),
  });
  assert.equal(ok.status, 200, await ok.clone().text());

  const bomb = await fetch(`${app.url}/api/upload/batch`, {
    method: 'POST',
    headers: { ...gzipJson, ...key },
    body: BOMB,
  });
  assert.equal(bomb.status, 413);
  const body = (await bomb.json()) as any;
  assert.match(
    body.error,
    new RegExp(`^Compressed body inflates too far \\(limit ${MAX_INFLATION_RATIO} times`),
  );
  assert.deepEqual(body.usage, { received: 0, stored: 0, duplicates: 0 });
});

test('a route that needs more than 1 MB takes it after its authentication, never before', async () => {
  const admin = await login(app.url, ADMIN.username, ADMIN.password);
  const member = await createUser(app, admin, { role: 'user', tenant_id: await createTenant(app, admin) });
  const user = await login(app.url, member.username, member.password);
  const created = await api(app.url, 'POST', '/api/sessions', { auth: user, body: { tool_name: 'claude' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id = created.body.session?.session_id ?? created.body.session_id;
  // 600,000 characters (the field's limit is 1,000,000), 1.2 MB of UTF-8: over the ordinary 1 MB.
  const content = 'é'.repeat(600_000);
  const path = `/api/sessions/${id}/messages`;
  const big = Buffer.from(JSON.stringify({ role: 'user', content }));
  // Without a session the body is not read at all: 401 while the request is still open.
  const anonymous = await answerBeforeBody(path, { 'content-type': 'application/json' }, big);
  assert.equal(anonymous.status, 401);
  const added = await api(app.url, 'POST', path, { auth: user, body: { role: 'user', content } });
  assert.equal(added.status, 201, JSON.stringify(added.body).slice(0, 300));
  const gz = await answerBeforeBody(path, { ...gzipJson, ...user.headers }, gzipSync(big));
  assert.equal(gz.status, 415);
});
