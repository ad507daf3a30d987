import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { loadSettings, SettingsError } from '../../config/settings.ts';

const dir = () => mkdtempSync(path.join(os.tmpdir(), 'svc-settings-'));

test('defaults when nothing is set', () => {
  const s = loadSettings({ SVC_DATA_DIR: dir() });
  assert.equal(s.PORT, 19888);
  assert.equal(s.HOST, '127.0.0.1');
  assert.equal(s.TEMPORAL_NAMESPACE, 'default');
  assert.equal(s.TEMPORAL_TASK_QUEUE, 'svc');
  assert.equal(s.SVC_ADMIN_USERNAME, 'admin');
  assert.equal(s.dialect, 'sqlite');
  assert.equal(s.sources.PORT, 'default');
});

test('environment beats config.json, which beats the default', () => {
  const d = dir();
  writeFileSync(
    path.join(d, 'config.json'),
    JSON.stringify({ port: 20001, HOST: '0.0.0.0', temporal_task_queue: 'from-file' }),
  );
  const s = loadSettings({ SVC_DATA_DIR: d, PORT: '20002' });
  assert.equal(s.PORT, 20002);
  assert.equal(s.sources.PORT, 'env');
  assert.equal(s.HOST, '0.0.0.0');
  assert.equal(s.TEMPORAL_TASK_QUEUE, 'from-file');
  assert.equal(s.sources.HOST, 'file');
});

test('config.yaml is read too, and DATABASE_URL selects PostgreSQL', () => {
  const d = dir();
  writeFileSync(path.join(d, 'config.yaml'), 'DATABASE_URL: postgres://u:p@db:5432/svc\nlog_level: debug\n');
  const s = loadSettings({ SVC_DATA_DIR: d });
  assert.equal(s.dialect, 'postgres');
  assert.equal(s.LOG_LEVEL, 'debug');
});

test('invalid values and the production guard fail with a clear message', () => {
  assert.throws(
    () => loadSettings({ SVC_DATA_DIR: dir(), PORT: 'eighty' }),
    (e: Error) => e instanceof SettingsError && /PORT/.test(e.message),
  );
  assert.throws(
    () => loadSettings({ SVC_DATA_DIR: dir(), NODE_ENV: 'production', SECRET_KEY: 's' }),
    (e: Error) => e instanceof SettingsError && /without SVC_ENCRYPTION_KEY\. Set it /.test(e.message),
  );
  assert.equal(
    loadSettings({ SVC_DATA_DIR: dir(), NODE_ENV: 'production', SECRET_KEY: 's', SVC_ENCRYPTION_KEY: 'k' })
      .production,
    true,
  );
});
