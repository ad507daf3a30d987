// Codex (cli_gamma) per-session CODEX_HOME: the config.toml the agent writes (a custom provider on the
// proxy, no WebSocket, few retries, nothing else that calls out), and its life in a real session run
// by SessionManager with a stand-in `codex` script: created 0700 in the agent's state folder before
// the first turn, named by CODEX_HOME at every turn, never holding the proxy token (a rotated token
// reaches the next turn through the environment only), removed when the session ends. Also the turn
// endings the adapter reports: `turn.failed` and a process that exits without ending its turn.
import assert from 'node:assert/strict';
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { getAdapter } from '../../agent/adapters.ts';
import { CODEX_PROVIDER_ID, codexConfigToml } from '../../agent/codex-home.ts';
import type { AgentConfig } from '../../agent/config.ts';
import { Logger } from '../../agent/log.ts';
import type { AgentEvent } from '../../agent/protocol.ts';
import { sandboxProxyBaseUrl } from '../../agent/sandbox.ts';
import { SessionManager } from '../../agent/sessions.ts';

const TOKEN_1 = 'svcpt_first-token-0a1b2c3d4e5f';
const TOKEN_2 = 'svcpt_rotated-token-9f8e7d6c5b4a';
const PROXY = 'http://127.0.0.1:19888/api/remote/llm-proxy';

describe('codex config.toml', () => {
  it('defines the proxy as a custom Responses provider keyed by an env variable, without websockets', () => {
    const toml = codexConfigToml(`${PROXY}/`, 'OPENAI_API_KEY');
    assert.match(toml, new RegExp(`^model_provider = "${CODEX_PROVIDER_ID}"$`, 'm'));
    assert.match(toml, new RegExp(`^\\[model_providers\\.${CODEX_PROVIDER_ID}\\]$`, 'm'));
    assert.match(toml, new RegExp(`^base_url = "${PROXY}"$`, 'm'), 'trailing slash dropped');
    for (const line of [
      'env_key = "OPENAI_API_KEY"',
      'wire_api = "responses"',
      'supports_websockets = false',
      'requires_openai_auth = false',
      'request_max_retries = 1',
      'stream_max_retries = 1',
      'check_for_update_on_startup = false',
      'unbounded_connection_retries = false',
      'plugins = false',
      'apps = false',
      'remote_plugin = false',
    ])
      assert.ok(toml.split('\n').includes(line), line);
    assert.match(toml, /\[analytics\]\nenabled = false/);
  });

  it('refuses a base URL that is not http(s) and a variable name that is not one', () => {
    assert.throws(() => codexConfigToml('file:///etc/passwd', 'OPENAI_API_KEY'), /http\(s\)/);
    assert.throws(() => codexConfigToml('not a url', 'OPENAI_API_KEY'), /valid URL/);
    assert.throws(() => codexConfigToml(PROXY, 'A"B'), /invalid variable/);
  });

  it('escapes the URL as a TOML string (no injected keys)', () => {
    const toml = codexConfigToml('http://h/x"\nmodel_provider = "openai', 'OPENAI_API_KEY');
    assert.equal(toml.match(/^model_provider = /gm)?.length, 1);
  });
});

/** A stand-in `codex exec`: reports what it sees, then ends the turn as its prompt asks. */
function fakeCodex(dir: string): string {
  const file = join(dir, 'fake-codex.mjs');
  writeFileSync(
    file,
    `#!/usr/bin/env node
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
let prompt = '';
process.stdin.on('data', (c) => (prompt += c));
process.stdin.on('end', () => {
  const home = process.env.CODEX_HOME;
  const files = Object.fromEntries(readdirSync(home, { withFileTypes: true }).filter((f) => f.isFile()).map((f) => [f.name, readFileSync(join(home, f.name), 'utf8')]));
  const say = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
  say({ type: 'thread.started', thread_id: 'thread-1' });
  say({ type: 'probe', home, key: process.env.OPENAI_API_KEY, codex_api_key: process.env.CODEX_API_KEY ?? null, files, args: process.argv.slice(2) });
  if (prompt === 'exit') process.exit(3);
  if (prompt === 'fail') {
    say({ type: 'error', message: 'Connection failed: error sending request' });
    say({ type: 'turn.failed', error: { message: 'Connection failed: error sending request' } });
    process.exit(1);
  }
  say({ type: 'turn.completed', usage: { input_tokens: 5, cached_input_tokens: 1, output_tokens: 2 } });
});
`,
  );
  chmodSync(file, 0o755);
  return file;
}

async function until<T>(what: string, fn: () => T | undefined, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('codex session home', () => {
  it('lives in the state folder for the session, never holds the token, and is removed at the end', async () => {
    const root = mkdtempSync(join(tmpdir(), 'codex-home-test-'));
    const stateDir = join(root, 'agent', 'sessions');
    const events: AgentEvent[] = [];
    const config = {
      cli_tool: 'cli_gamma',
      cli_path: fakeCodex(root),
      cli_env: { CODEX_HOME: '/somewhere/else', OPENAI_API_KEY: 'from-cli-env' },
      max_sessions: 5,
      work_dir: '',
      work_roots: [tmpdir()],
      stop_grace_period: 1,
      turn_stall_timeout: 60,
    } as unknown as AgentConfig;
    const manager = new SessionManager(config, (e) => events.push(e), new Logger('ERROR'), { stateDir });
    const project = mkdtempSync(join(tmpdir(), 'codex-project-'));
    const outputs = () => events.flatMap((e) => (e.type === 'output' ? [e] : []));
    const probes = () =>
      outputs()
        .filter((e) => e.data.includes('"type":"probe"'))
        .map((e) => JSON.parse(e.data));
    const notes = (name: string) =>
      outputs()
        .filter((e) => e.stream === 'system')
        .map((e) => JSON.parse(e.data))
        .filter((n) => n.event === name);
    const send = (command_type: string, payload: Record<string, unknown> = {}) =>
      manager.handle({
        command_id: `${command_type}-${Date.now()}`,
        command_type,
        session_id: 's1',
        payload,
      });

    const started = await send('session.start', {
      project_path: project,
      proxy_token: TOKEN_1,
      proxy_base_url: PROXY,
    });
    assert.equal(started.ok, true, JSON.stringify(started));
    const [home] = readdirSync(stateDir).map((d) => join(stateDir, d));
    assert.ok(home, 'a per-session directory exists before the first turn');
    assert.equal(statSync(home).mode & 0o777, 0o700);
    assert.equal(statSync(join(home, 'config.toml')).mode & 0o777, 0o600);
    assert.ok(!home.startsWith(project), 'not in the project');

    assert.equal((await send('session.input', { content: 'hello' })).ok, true);
    const first = await until('first turn probe', () => probes()[0]).catch((e) => {
      console.log(JSON.stringify(outputs().map((o) => [o.stream, o.data])));
      throw e;
    });
    await until('first turn process end', () => notes('turn_finished')[0]);
    assert.equal(first.home, home, 'CODEX_HOME is the session directory, not cli_env');
    assert.equal(first.key, TOKEN_1, 'the proxy token comes from the environment');
    assert.equal(first.codex_api_key, null, 'no credential for the built-in OpenAI provider');
    // In the sandbox the CLI reaches the proxy through the gate's loopback port (agent/sandbox.ts).
    assert.match(first.files['config.toml'], new RegExp(`base_url = "${sandboxProxyBaseUrl(PROXY)}"`));

    assert.equal((await send('session.rotate_token', { proxy_token: TOKEN_2 })).ok, true);
    assert.equal((await send('session.input', { content: 'fail' })).ok, true);
    const second = await until('second turn probe', () => probes()[1]);
    assert.equal(second.key, TOKEN_2, 'a rotated token applies from the next turn');
    assert.deepEqual(second.args.slice(-3), ['resume', 'thread-1', '-'], 'the next turn resumes the thread');
    const failed = await until('turn_error note', () => notes('turn_error')[0]);
    assert.equal(failed.message, 'Connection failed: error sending request');

    assert.equal((await send('session.input', { content: 'exit' })).ok, true);
    const exitedEarly = await until('exit-without-turn-end note', () => notes('turn_error')[1]);
    assert.match(exitedEarly.message, /exited \(code 3\) without ending its turn/);

    // Nothing the agent wrote holds either token.
    for (const name of readdirSync(home, { recursive: true }) as string[]) {
      const p = join(home, name);
      if (!statSync(p).isFile()) continue;
      const text = readFileSync(p, 'utf8');
      assert.ok(!text.includes(TOKEN_1) && !text.includes(TOKEN_2), `${name} holds no token`);
    }

    assert.equal((await send('session.stop')).ok, true);
    await until('exited', () =>
      events.find((e) => e.type === 'session_state' && e.state === 'exited' && e.session_id === 's1'),
    );
    assert.equal(existsSync(home), false, 'the session directory is removed when the session ends');
    assert.deepEqual(readdirSync(stateDir), []);
  });

  it('only cli_gamma writes a session directory', () => {
    assert.equal(typeof getAdapter('cli_gamma').prepareSessionDir, 'function');
    assert.equal(getAdapter('some_unknown_tool').prepareSessionDir, undefined);
  });
});
