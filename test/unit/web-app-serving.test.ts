// api/web-app.ts without a build: the app's pages answer 503 naming `npm run build:web`, unknown /api
// paths are left to the API (next handler), and the HTML is served with its CSP once a build exists.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import express from 'express';
import { WEB_CSP, webAppRouter } from '../../api/web-app.ts';

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
