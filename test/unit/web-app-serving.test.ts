// api/web-app.ts without a build: the app's pages answer 503 naming `npm run build:web`, unknown /api
// paths are left to the API (next handler), and the HTML is served with its CSP once a build exists;
// hashed assets go out as their precompressed .br/.gz twins when the request accepts them.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { brotliCompressSync, brotliDecompressSync, gunzipSync } from 'node:zlib';
import express from 'express';
import { WEB_CSP, webAppRouter } from '../../api/web-app.ts';
import { chooseEncoding } from '../../api/web-precompressed.ts';
import { precompressDir, precompressPlugin } from '../../web/precompress.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'web-dist-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function serve(distDir: string) {
  const app = express();
  app.use(webAppRouter(distDir));
  app.use((_req, res) => {
    res.status(404).json({ error: 'Not found' });
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, close: () => new Promise((r) => server.close(r)) };
}

test('without web/dist the app answers 503 naming npm run build:web; /api is untouched', async () => {
  const s = await serve(path.join(dir, 'missing'));
  try {
    const res = await fetch(`${s.url}/`);
    assert.equal(res.status, 503);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    assert.match(await res.text(), /npm run build:web/);
    assert.equal((await fetch(`${s.url}/manage/users`)).status, 503);
    const api = await fetch(`${s.url}/api/whatever`);
    assert.equal(api.status, 404);
    assert.deepEqual(await api.json(), { error: 'Not found' });
  } finally {
    await s.close();
  }
});

test('a rebuilt index.html is served without a restart, with the CSP', async () => {
  const dist = path.join(dir, 'dist');
  mkdirSync(path.join(dist, 'assets'), { recursive: true });
  writeFileSync(path.join(dist, 'index.html'), '<p>one</p>');
  const s = await serve(dist);
  try {
    let res = await fetch(`${s.url}/deep/link`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-security-policy'), WEB_CSP);
    assert.equal(await res.text(), '<p>one</p>');
    writeFileSync(path.join(dist, 'index.html'), '<p>two, longer</p>');
    const later = new Date(Date.now() + 5000);
    const { utimesSync } = await import('node:fs');
    utimesSync(path.join(dist, 'index.html'), later, later);
    res = await fetch(`${s.url}/`);
    assert.equal(await res.text(), '<p>two, longer</p>');
    assert.equal((await fetch(`${s.url}/`, { method: 'POST' })).status, 404, 'only GET/HEAD get the page');
  } finally {
    await s.close();
  }
});

// Precompressed assets (issue 14 "Measure": compressed JavaScript): web/precompress.ts writes .br/.gz
// twins at build time; api/web-precompressed.ts sends the one the request accepts.

test('chooseEncoding: br when allowed at the best weight, then gzip; q=0 refuses; no header is identity', () => {
  const cases: Array<[string | undefined, 'br' | 'gzip' | null]> = [
    ['gzip, deflate, br, zstd', 'br'], // Chromium lists gzip first: br still wins at equal weight
    ['gzip, deflate', 'gzip'],
    ['br;q=0, gzip', 'gzip'],
    ['gzip;q=1, br;q=0.5', 'gzip'],
    ['BR', 'br'],
    ['x-gzip', 'gzip'],
    ['*', 'br'],
    ['*;q=0', null],
    ['gzip;q=0, br;q=0, *', null],
    ['br;q=abc', null],
    ['identity', null],
    ['', null],
    [undefined, null],
  ];
  for (const [header, want] of cases) assert.equal(chooseEncoding(header), want, String(header));
});

/** A raw GET (Node's fetch would decode the body and hide what was sent). */
function rawGet(url: string, headers: Record<string, string> = {}, method = 'GET') {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>(
    (resolve, reject) => {
      const req = http.request(url, { method, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      });
      req.on('error', reject);
      req.end();
    },
  );
}

test('hashed assets are sent as their .br or .gz twin when accepted, plain otherwise, always with Vary', async () => {
  const dist = path.join(dir, 'compressed');
  const assets = path.join(dist, 'assets');
  mkdirSync(assets, { recursive: true });
  writeFileSync(path.join(dist, 'index.html'), '<p>app</p>');
  const js = Array.from({ length: 300 }, (_, i) => `export const value${i} = ${i} * 2;`).join('\n');
  writeFileSync(path.join(assets, 'index-AbC123.js'), js);
  writeFileSync(path.join(assets, 'tiny-Zz9.js'), 'export {};');
  // A twin whose plain file is gone (a stale build) must not answer.
  writeFileSync(path.join(assets, 'gone-Q1.js.br'), brotliCompressSync(Buffer.from(js)));
  const plugin = precompressPlugin();
  plugin.writeBundle({ dir: dist });
  assert.ok(
    existsSync(path.join(assets, 'index-AbC123.js.br')) &&
      existsSync(path.join(assets, 'index-AbC123.js.gz')),
  );
  assert.ok(!existsSync(path.join(assets, 'tiny-Zz9.js.br')), 'files under 1 kB get no twin');
  assert.deepEqual(precompressDir(assets).sort(), ['index-AbC123.js.br', 'index-AbC123.js.gz'], 'idempotent');

  const s = await serve(dist);
  try {
    const url = `${s.url}/assets/index-AbC123.js`;
    const br = await rawGet(url, { 'accept-encoding': 'gzip, deflate, br, zstd' });
    assert.equal(br.status, 200);
    assert.equal(br.headers['content-encoding'], 'br');
    assert.match(br.headers['content-type'] ?? '', /^text\/javascript/);
    assert.match(br.headers.vary ?? '', /Accept-Encoding/i);
    assert.equal(br.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.ok(br.body.length < js.length / 3, `${br.body.length} bytes for ${js.length}`);
    assert.equal(brotliDecompressSync(br.body).toString(), js);
    assert.equal(Number(br.headers['content-length']), br.body.length);

    const gz = await rawGet(url, { 'accept-encoding': 'br;q=0, gzip' });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.equal(gunzipSync(gz.body).toString(), js);
    assert.match(gz.headers.vary ?? '', /Accept-Encoding/i);

    for (const ae of [undefined, 'identity', 'gzip;q=0, br;q=0']) {
      const plain = await rawGet(url, ae ? { 'accept-encoding': ae } : {});
      assert.equal(plain.status, 200, String(ae));
      assert.equal(plain.headers['content-encoding'], undefined, String(ae));
      assert.equal(plain.body.toString(), js, String(ae));
      assert.match(plain.headers.vary ?? '', /Accept-Encoding/i, String(ae));
      assert.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable');
    }

    const head = await rawGet(url, { 'accept-encoding': 'br' }, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.headers['content-encoding'], 'br');
    assert.equal(head.body.length, 0);

    const tiny = await rawGet(`${s.url}/assets/tiny-Zz9.js`, { 'accept-encoding': 'br' });
    assert.equal(tiny.headers['content-encoding'], undefined);
    assert.equal(tiny.body.toString(), 'export {};');

    // No twin answers without its plain file, for odd names, or outside the assets folder.
    for (const p of [
      '/assets/gone-Q1.js',
      '/assets/..%2Findex.html',
      '/assets/.hidden.js',
      '/assets/missing.js',
    ]) {
      const res = await rawGet(`${s.url}${p}`, { 'accept-encoding': 'br, gzip' });
      assert.equal(res.status, 404, p);
      assert.equal(res.headers['content-encoding'], undefined, p);
      assert.deepEqual(JSON.parse(res.body.toString()), { error: 'Not found' }, p);
    }
    // The twin itself asked for by name is a plain (already compressed) file, not re-encoded.
    const direct = await rawGet(`${s.url}/assets/index-AbC123.js.br`, { 'accept-encoding': 'br' });
    assert.equal(direct.headers['content-encoding'], undefined);
  } finally {
    await s.close();
  }
});
