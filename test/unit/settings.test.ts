import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
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

test('nested sections: file objects, SVC_<SECTION>__<KEY> overrides, defaults, validation', () => {
  const d = dir();
  writeFileSync(
    path.join(d, 'config.json'),
    JSON.stringify({
      chatplat_a: { app_key: 'from-file', org_sync_enabled: true, org_sync_interval_minutes: 30 },
      egress: { allow_hosts: ['gw.corp.example'] },
    }),
  );
  const s = loadSettings({
    SVC_DATA_DIR: d,
    SVC_CHATPLAT_A__ORG_SYNC_INTERVAL_MINUTES: '15',
    SVC_CHATPLAT_B__ORG_SYNC_TENANT_ID: '7',
    SVC_EGRESS__ALLOW_HOSTS: 'a.example, b.example',
    SVC_REMOTE__PROXY_TOKEN_TTL_GENERAL_MINUTES: '60',
    SVC_ALERTS__CHATPLAT_A_WEBHOOK_SECRET: 'whsec',
  });
  assert.equal(s.chatplat_a.app_key, 'from-file');
  assert.equal(s.chatplat_a.org_sync_enabled, true);
  assert.equal(s.chatplat_a.org_sync_interval_minutes, 15);
  assert.equal(s.sources['chatplat_a.org_sync_interval_minutes'], 'env');
  assert.equal(s.sources['chatplat_a.app_key'], 'file');
  assert.equal(s.chatplat_b.org_sync_tenant_id, 7);
  assert.equal(s.chatplat_b.org_sync_enabled, false);
  assert.deepEqual(
    s.egress.allow_hosts,
    ['a.example', 'b.example'],
    'env beats the file, lists split on commas',
  );
  assert.equal(s.remote.proxy_token_ttl_general_minutes, 60);
  assert.equal(s.remote.proxy_token_ttl_ha_pool_minutes, 15);
  assert.equal(s.remote.registration_token_ttl_hours, 24);
  assert.equal(s.alerts.chatplat_a_webhook_secret, 'whsec');
  assert.equal(s.agent.offline_after_seconds, 180);
  assert.equal(s.sources['agent.offline_after_seconds'], 'default');

  assert.throws(
    () => loadSettings({ SVC_DATA_DIR: d, SVC_CHATPLAT_A__ORG_SYNC_INTERVAL_MINUTES: 'hourly' }),
    (e: Error) => e instanceof SettingsError && /chatplat_a\.org_sync_interval_minutes/.test(e.message),
  );
  const typo = dir();
  writeFileSync(path.join(typo, 'config.json'), JSON.stringify({ chatplat_a: { app_kee: 'x' } }));
  assert.throws(
    () => loadSettings({ SVC_DATA_DIR: typo }),
    (e: Error) => e instanceof SettingsError && /chatplat_a/.test(e.message) && /app_kee/.test(e.message),
    'an unknown key in a section is an error, not silently ignored',
  );
  const notObject = dir();
  writeFileSync(path.join(notObject, 'config.yaml'), 'egress: yes\n');
  assert.throws(
    () => loadSettings({ SVC_DATA_DIR: notObject }),
    (e: Error) => e instanceof SettingsError && /egress: expected an object/.test(e.message),
  );
});

test('no layer imports settings from bin/ (the settings module is at the bottom)', () => {
  const r = spawnSync('git', ['grep', '-l', '-e', "from '[./]*bin/settings", '--', '*.ts'], {
    encoding: 'utf8',
  });
  assert.equal(r.status, 1, `files importing bin/settings: ${r.stdout}`);
});

test('collectors section: home-folder defaults, env lists, host and sender overrides', () => {
  const d = dir();
  const s = loadSettings({ SVC_DATA_DIR: d });
  assert.deepEqual(s.collectors.claude_code_dirs, [path.join(os.homedir(), '.claude', 'projects')]);
  assert.deepEqual(s.collectors.codex_dirs, [path.join(os.homedir(), '.codex', 'sessions')]);
  assert.equal(s.collectors.host_name, os.hostname());
  assert.equal(s.collectors.sender_name, os.userInfo().username);
  assert.equal(s.collectors.settle_seconds, 300);
  const o = loadSettings({
    SVC_DATA_DIR: d,
    SVC_COLLECTORS__CLAUDE_CODE_DIRS: '/a/claude, /b/claude',
    SVC_COLLECTORS__CODEX_DIRS: '/c/codex',
    SVC_COLLECTORS__HOST_NAME: 'build-01',
    SVC_COLLECTORS__SENDER_NAME: 'ci',
    SVC_COLLECTORS__SETTLE_SECONDS: '0',
  });
  assert.deepEqual(o.collectors.claude_code_dirs, ['/a/claude', '/b/claude']);
  assert.deepEqual(o.collectors.codex_dirs, ['/c/codex']);
  assert.equal(o.collectors.host_name, 'build-01');
  assert.equal(o.collectors.sender_name, 'ci');
  assert.equal(o.collectors.settle_seconds, 0);
  assert.equal(o.sources['collectors.codex_dirs'], 'env');
  assert.throws(
    () => loadSettings({ SVC_DATA_DIR: d, SVC_COLLECTORS__SETTLE_SECONDS: '-1' }),
    (e: Error) => e instanceof SettingsError && /collectors\.settle_seconds/.test(e.message),
  );
});

test('quota section: multi-tenant switch off and 60 s interval by default; env and file override', () => {
  const d = dir();
  const s = loadSettings({ SVC_DATA_DIR: d });
  assert.equal(s.quota.multi_tenant, false);
  assert.equal(s.quota.enforcement_interval_seconds, 60);
  assert.equal(s.sources['quota.multi_tenant'], 'default');

  const e = loadSettings({
    SVC_DATA_DIR: d,
    SVC_QUOTA__MULTI_TENANT: 'true',
    SVC_QUOTA__ENFORCEMENT_INTERVAL_SECONDS: '2',
  });
  assert.equal(e.quota.multi_tenant, true);
  assert.equal(e.quota.enforcement_interval_seconds, 2);
  assert.equal(e.sources['quota.multi_tenant'], 'env');

  const f = dir();
  writeFileSync(
    path.join(f, 'config.yaml'),
    'quota:\n  multi_tenant: on\n  enforcement_interval_seconds: 30\n',
  );
  const fromFile = loadSettings({ SVC_DATA_DIR: f });
  assert.equal(fromFile.quota.multi_tenant, true);
  assert.equal(fromFile.quota.enforcement_interval_seconds, 30);

  assert.throws(
    () => loadSettings({ SVC_DATA_DIR: d, SVC_QUOTA__ENFORCEMENT_INTERVAL_SECONDS: '0' }),
    (err: Error) => err instanceof SettingsError && /quota\.enforcement_interval_seconds/.test(err.message),
  );
});

test('pricing section: empty overrides and a 3/15 default price; file objects and env JSON override', () => {
  const d = dir();
  const s = loadSettings({ SVC_DATA_DIR: d });
  assert.deepEqual(s.pricing.models, {});
  assert.equal(s.pricing.default_input_per_million, 3);
  assert.equal(s.pricing.default_output_per_million, 15);

  const e = loadSettings({
    SVC_DATA_DIR: d,
    SVC_PRICING__MODELS: '{"house-model": {"input": 1, "output": 2}}',
    SVC_PRICING__DEFAULT_OUTPUT_PER_MILLION: '20',
  });
  assert.deepEqual(e.pricing.models, { 'house-model': { input: 1, output: 2 } });
  assert.equal(e.pricing.default_output_per_million, 20);
  assert.equal(e.sources['pricing.models'], 'env');

  const f = dir();
  writeFileSync(
    path.join(f, 'config.json'),
    JSON.stringify({ pricing: { models: { 'gpt-4o': { input: 2, output: 9 } } } }),
  );
  assert.deepEqual(loadSettings({ SVC_DATA_DIR: f }).pricing.models, { 'gpt-4o': { input: 2, output: 9 } });

  assert.throws(() => loadSettings({ SVC_DATA_DIR: d, SVC_PRICING__MODELS: 'not json' }), SettingsError);
  assert.throws(
    () => loadSettings({ SVC_DATA_DIR: d, SVC_PRICING__MODELS: '{"m": {"input": -1, "output": 2}}' }),
    SettingsError,
  );
});
