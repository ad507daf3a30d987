// The shell installer for real on this machine against a running server: the script served by
// GET /api/remote/agent/install.sh downloads the agent files, writes config.json, registers with the
// token (service installation and the CLI download skipped by their flags). The installed agent (the
// transpiled .js files, not the repo's sources) then runs a session with the fake CLI. A second run
// with the same token fails: the token was consumed.
// store-independent: the shell installer and the installed agent files
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startTestApp, type TestApp } from '../support/harness.ts';
import {
  buildRemoteCast,
  cliPid,
  FAKE_CLI,
  type RemoteCast,
  registrationToken,
  sessionOutput,
  waitUntil,
} from '../support/remote.ts';
import { api } from '../support/session.ts';

let app: TestApp;
let cast: RemoteCast;
let script: string;
let installed: ChildProcess | undefined;
const work = mkdtempSync(path.join(os.tmpdir(), 'svc-install-'));

before(async () => {
  app = await startTestApp({ worker: true });
  cast = await buildRemoteCast(app);
  script = path.join(work, 'install.sh');
  const res = await fetch(`${app.url}/api/remote/agent/install.sh`);
  assert.equal(res.status, 200);
  writeFileSync(script, await res.text());
});
after(async () => {
  if (installed && installed.exitCode === null) {
    installed.kill('SIGTERM');
    await new Promise((r) => installed!.once('exit', r));
  }
  await app?.close();
});

// Async so the server in this process keeps answering while the script runs.
function runInstaller(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn('sh', [script, ...args], {
      env: { PATH: process.env.PATH, HOME: work },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

test('install.sh --dir <temp> --no-service --skip-cli-install installs and registers the agent', async () => {
  const token = await registrationToken(app.url, cast.admin.session, cast.tenantId);
  const dir = path.join(work, 'agent');
  const r = await runInstaller([
    '--token',
    token,
    '--dir',
    dir,
    '--name',
    'installed-machine',
    '--no-service',
    '--skip-cli-install',
    '--insecure',
  ]);
  assert.equal(r.code, 0, r.out);
  assert.ok(!r.out.includes(token), 'the token is not echoed');
  for (const f of ['main.js', 'agent.js', 'package.json', 'config.json'])
    assert.ok(existsSync(path.join(dir, f)), f);
  assert.equal(statSync(path.join(dir, 'config.json')).mode & 0o777, 0o600);
  const config = JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8'));
  assert.ok(config.agent_token && config.machine_id);
  assert.equal(config.registration_token, undefined);
  assert.equal(config.server_url, app.url);
  const m = await api(app.url, 'GET', `/api/remote/machines/${config.machine_id}`, {
    auth: cast.admin.session,
  });
  assert.equal(m.status, 200);
  assert.equal(m.body.machine_name, 'installed-machine');
  assert.equal(m.body.tenant_id, cast.tenantId);

  // The same token again: registration fails (consumed) and the script says so.
  const again = await runInstaller([
    '--token',
    token,
    '--dir',
    path.join(work, 'agent2'),
    '--no-service',
    '--skip-cli-install',
    '--insecure',
  ]);
  assert.notEqual(again.code, 0);
  assert.match(again.out, /consumed/);

  // Re-installing over the same directory with a new token renews the registration: the kept
  // agent_token proves the machine_id is this machine's (a bare token could not take it over).
  const reinstall = await runInstaller([
    '--token',
    await registrationToken(app.url, cast.admin.session, cast.tenantId),
    '--dir',
    dir,
    '--no-service',
    '--skip-cli-install',
    '--insecure',
  ]);
  assert.equal(reinstall.code, 0, reinstall.out);
  const renewed = JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8'));
  assert.equal(renewed.machine_id, config.machine_id);
  assert.notEqual(renewed.agent_token, config.agent_token);

  // Without --insecure the served script refuses this http:// server.
  const plain = await runInstaller(['--token', token, '--dir', path.join(work, 'agent3'), '--no-service']);
  assert.equal(plain.code, 1);
  assert.match(plain.out, /refusing the http:\/\/ server URL/);
});

test('the installed agent runs a session with the fake CLI', async () => {
  const dir = path.join(work, 'agent');
  const configPath = path.join(dir, 'config.json');
  const config = JSON.parse(readFileSync(configPath, 'utf8'));
  const project = path.join(work, 'project');
  mkdirSync(project, { recursive: true });
  writeFileSync(
    configPath,
    JSON.stringify(
      {
        ...config,
        cli_path: FAKE_CLI,
        cli_env: { FAKE_CLI_ECHO: '1' },
        heartbeat_interval: 1,
        work_dir: work,
        work_roots: [work],
      },
      null,
      2,
    ),
    { mode: 0o600 },
  );
  // What the service unit runs: node <dir>/main.js --config <dir>/config.json run
  installed = spawn(process.execPath, [path.join(dir, 'main.js'), '--config', configPath, 'run'], {
    env: { PATH: process.env.PATH, HOME: work },
    stdio: 'ignore',
  });
  await waitUntil(
    'installed agent online',
    async () =>
      (await api(app.url, 'GET', `/api/remote/machines/${config.machine_id}`, { auth: cast.admin.session }))
        .body.status === 'online',
    20000,
  );
  const created = await api(app.url, 'POST', '/api/remote/sessions', {
    auth: cast.admin.session,
    // Not `work` itself: it contains the agent's directory, which is never a project.
    body: { machine_id: config.machine_id, project_path: project },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const sid = created.body.session_id;
  await cliPid(app.url, cast.admin.session, sid);
  await api(app.url, 'POST', `/api/remote/sessions/${sid}/chat`, {
    auth: cast.admin.session,
    body: { content: 'hello installed agent' },
  });
  await waitUntil('reply', async () =>
    (await sessionOutput(app.url, cast.admin.session, sid)).some(
      (e) => e.stream === 'stdout' && e.data.includes('echo: hello installed agent'),
    ),
  );
  assert.equal(
    (await api(app.url, 'POST', `/api/remote/sessions/${sid}/stop`, { auth: cast.admin.session })).status,
    200,
  );
});
