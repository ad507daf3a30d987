import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  ConfigError,
  ConfigStore,
  DEFAULT_SERVER_URL,
  ensureMachineId,
  loadConfig,
} from '../../agent/config.ts';

function configFile(data: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'agent-config-'));
  const path = join(dir, 'config.json');
  writeFileSync(path, JSON.stringify(data));
  return path;
}

describe('agent config precedence', () => {
  it('uses the spec defaults when neither env nor file set a key', () => {
    const { config, sources } = loadConfig(configFile({}), {});
    assert.equal(config.server_url, DEFAULT_SERVER_URL);
    assert.match(config.server_url, /:19888$/);
    assert.equal(config.heartbeat_interval, 60);
    assert.equal(config.reconnect_base_delay, 1);
    assert.equal(config.reconnect_max_delay, 60);
    assert.equal(config.max_sessions, 5);
    assert.equal(config.log_level, 'INFO');
    assert.equal(config.agent_token, '');
    assert.equal(config.cli_tool, 'cli_alpha');
    assert.equal(config.long_poll_wait_ms, 25000);
    assert.equal(config.stop_grace_period, 5);
    assert.equal(sources.max_sessions, 'default');
  });

  it('lets the file override defaults and the environment override the file', () => {
    const path = configFile({
      server_url: 'http://file.example:1/',
      max_sessions: 3,
      heartbeat_interval: 30,
      log_level: 'debug',
      agent_token: 'from-file',
    });
    const env = { SVC_MAX_SESSIONS: '7', SVC_AGENT_TOKEN: 'from-env', SVC_HEARTBEAT_INTERVAL: '0.25' };
    const { config, sources } = loadConfig(path, env);
    assert.equal(config.server_url, 'http://file.example:1', 'trailing slash removed');
    assert.equal(sources.server_url, 'file');
    assert.equal(config.max_sessions, 7);
    assert.equal(sources.max_sessions, 'env');
    assert.equal(config.agent_token, 'from-env');
    assert.equal(config.heartbeat_interval, 0.25, 'fractional seconds are allowed');
    assert.equal(config.log_level, 'DEBUG');
  });

  it('reads machine_name, registration_token and cli_tool from the file only', () => {
    const path = configFile({ machine_name: 'box', registration_token: 'reg', cli_tool: 'cli_beta' });
    const env = { SVC_MACHINE_NAME: 'nope', SVC_REGISTRATION_TOKEN: 'nope', SVC_CLI_TOOL: 'nope' };
    const { config } = loadConfig(path, env);
    assert.equal(config.machine_name, 'box');
    assert.equal(config.registration_token, 'reg');
    assert.equal(config.cli_tool, 'cli_beta');
  });

  it('treats an empty environment variable as unset', () => {
    const { config } = loadConfig(configFile({ server_url: 'https://x.example' }), { SVC_SERVER_URL: '' });
    assert.equal(config.server_url, 'https://x.example');
  });

  it('rejects bad values with a message naming the source', () => {
    assert.throws(
      () => loadConfig(configFile({}), { SVC_MAX_SESSIONS: 'many' }),
      (err: Error) => {
        assert.ok(err instanceof ConfigError);
        assert.match(err.message, /SVC_MAX_SESSIONS must be a positive number/);
        return true;
      },
    );
    assert.throws(() => loadConfig(configFile({ max_sessions: 2.5 }), {}), /positive integer/);
    assert.throws(
      () => loadConfig(configFile({ server_url: 'ftp://x' }), {}),
      /"server_url" in .* http\(s\) URL/,
    );
    assert.throws(() => loadConfig(configFile({ log_level: 'LOUD' }), {}), /log_level/);
    assert.throws(
      () => loadConfig(configFile({ reconnect_base_delay: 10, reconnect_max_delay: 5 }), {}),
      /reconnect_max_delay/,
    );
    assert.throws(() => loadConfig(configFile({ cli_env: { A: 1 } }), {}), /object of strings/);
  });

  it('reports a config file that is not JSON', () => {
    const path = configFile({});
    writeFileSync(path, '{nope');
    assert.throws(() => loadConfig(path, {}), /not valid JSON/);
  });

  it('generates machine_id once, persists it with mode 0600 and keeps unknown keys', () => {
    const path = configFile({ custom: 'kept' });
    const first = loadConfig(path, {});
    const id = ensureMachineId(first);
    assert.match(id, /^[0-9a-f-]{36}$/);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    const onDisk = JSON.parse(readFileSync(path, 'utf8'));
    assert.equal(onDisk.machine_id, id);
    assert.equal(onDisk.custom, 'kept');
    const second = loadConfig(path, {});
    assert.equal(ensureMachineId(second), id, 'a second load reuses the stored id');
  });

  it('does not persist a machine_id given by the environment', () => {
    const path = configFile({});
    const loaded = loadConfig(path, { SVC_MACHINE_ID: 'env-id' });
    assert.equal(ensureMachineId(loaded), 'env-id');
    assert.equal(JSON.parse(readFileSync(path, 'utf8')).machine_id, undefined);
  });

  it('ConfigStore.update writes atomically and removes keys', () => {
    const path = configFile({ registration_token: 'once', a: 1 });
    const store = new ConfigStore(path);
    store.update({ agent_token: 'secret' }, ['registration_token']);
    const onDisk = JSON.parse(readFileSync(path, 'utf8'));
    assert.deepEqual(onDisk, { a: 1, agent_token: 'secret' });
    assert.equal(statSync(path).mode & 0o777, 0o600);
  });
});
