// The sandbox around the autonomous runner's CLI (issue 25 item 1; agent/sandbox.ts), with real parts:
// bubblewrap, the API's model proxy behind the gate, the database and the Temporal dev server of the
// run. The probe CLI (test/fixtures/isolation-probe-cli.mjs) tries what a prompt-injected agent run by
// any user would: read the service's secrets and database, another tenant's repository and an agent
// token, reach the Temporal port, the database and the API's other routes. All of it fails; the same
// step still writes its worktree and calls the model through the proxy.
// store-independent: what the sandbox lets a CLI reach (bubblewrap, the proxy gate), not what the store
//   keeps
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { forgetSandboxProbe } from '../../../agent/sandbox.ts';
import { cliRunner, type RunCliInput } from '../../../services/autonomous/runner/run-cli.ts';
import { usingPostgres } from '../../support/database.ts';
import { PROBE_CLI } from './isolation-support.ts';
import {
  FAKE_CLI,
  modelCalls,
  newWorkflow,
  type RunnerWorld,
  startRunnerWorld,
  writeScript,
} from './runner-support.ts';

let world: RunnerWorld;
let runner: ReturnType<typeof cliRunner>;
const secrets: Record<string, string> = {};

before(async () => {
  world = await startRunnerWorld();
  runner = cliRunner(
    { database: world.app.database, settings: world.app.settings, now: () => new Date() },
    { pollMs: 150, heartbeatMs: 100, graceMs: 1000 },
  );
  const dataDir = world.app.settings.dataDir;
  // What an attacker wants, where the service keeps it.
  secrets.devSecrets = path.join(dataDir, 'dev-secrets.json');
  writeFileSync(secrets.devSecrets, JSON.stringify({ encryption_key: 'dev-secret-canary' }), { mode: 0o600 });
  secrets.config = path.join(dataDir, 'config.json');
  writeFileSync(secrets.config, JSON.stringify({ secret_key: 'config-canary' }));
  secrets.sqlite = world.app.settings.sqlitePath ?? path.join(dataDir, 'svc.sqlite');
  writeFileSync(path.join(dataDir, 'marker'), 'x');
  // An agent's folder with its token, and another tenant's repository under the project roots.
  const agentDir = mkdtempSync(path.join(os.tmpdir(), 'svc-agent-home-'));
  secrets.agentToken = path.join(agentDir, 'config.json');
  writeFileSync(secrets.agentToken, JSON.stringify({ agent_token: 'svcag_canary' }), { mode: 0o600 });
  const other = path.join(dataDir, 'projects', 'tenant-other', 'repo');
  mkdirSync(other, { recursive: true });
  execFileSync('git', ['init', '-q', other]);
  secrets.otherRepo = path.join(other, 'secret.txt');
  writeFileSync(secrets.otherRepo, 'other tenant code');
});
after(async () => {
  await world?.close();
});

const input = (workflowId: string, worktree: string, probe: Record<string, unknown>): RunCliInput => ({
  workflowId,
  line: 'main',
  prompt: JSON.stringify({ probe }),
  worktreePath: worktree,
  cliTool: 'cli_beta',
});

interface Report {
  env: Record<string, string>;
  uid: number;
  reads: Record<string, string>;
  secretsIn: Record<string, boolean>;
  writes: Record<string, string>;
  tamper: Record<string, string>;
  connects: Record<string, string>;
  fetches: Record<string, string>;
  lists: Record<string, string>;
}
const report = (worktree: string) =>
  JSON.parse(readFileSync(path.join(worktree, '.svc-fake', 'report.json'), 'utf8')) as Report;

const port = (url: string) => new URL(url).port;
/** One step of the scripted fake CLI on the main line. */
const step = (workflowId: string, worktree: string) =>
  runner.run({
    workflowId,
    line: 'main',
    prompt: 'implement it',
    worktreePath: worktree,
    cliTool: 'cli_beta',
  });
/** /readyz's sandbox check. */
const sandboxCheck = async () =>
  ((await (await fetch(`${world.app.url}/readyz`)).json()) as { checks: Record<string, { status: string }> })
    .checks.sandbox?.status;

describe('autonomous CLI in the sandbox', () => {
  test('cannot read secrets, the database, an agent token or another repository, nor reach Temporal, the database or other API routes', async () => {
    world.app.settings.autonomous.cli_paths = { cli_beta: PROBE_CLI };
    const { workflowId, worktree } = await newWorkflow(world);
    const temporal = world.app.settings.TEMPORAL_ADDRESS;
    const dbTarget = usingPostgres()
      ? `${new URL(process.env.DATABASE_URL!).hostname}:${new URL(process.env.DATABASE_URL!).port || 5432}`
      : `127.0.0.1:${port(world.app.url)}`;
    const apiPort = port(world.app.url);
    const result = await runner.run(
      input(workflowId, worktree, {
        report: '.svc-fake/report.json',
        reads: [
          secrets.devSecrets,
          secrets.config,
          secrets.sqlite,
          secrets.agentToken,
          secrets.otherRepo,
          '/proc/1/environ',
          '/etc/shadow',
        ],
        writes: [
          { path: 'edited.txt', content: 'the worktree is writable' },
          { path: path.join(world.app.settings.dataDir, 'planted'), content: 'x' },
        ],
        tamper: ['hook', 'config'],
        connects: [temporal, dbTarget, `127.0.0.1:${apiPort}`],
        fetches: ['/api/auth/me', '/api/remote/llm-proxy/../../auth/me', `http://127.0.0.1:${apiPort}/livez`],
        lists: [world.app.settings.dataDir, os.homedir()],
      }),
    );
    assert.equal(result.outcome, 'ok', JSON.stringify(result));
    const r = report(worktree);
    for (const p of [
      secrets.devSecrets,
      secrets.config,
      secrets.sqlite,
      secrets.agentToken,
      secrets.otherRepo,
    ])
      assert.match(r.reads[p] ?? '', /^ERR:/, `${p} was readable: ${r.reads[p]}`);
    // Pid 1 is the sandbox's own first process: its environment is the CLI's, nothing of the service's.
    assert.equal(r.secretsIn['/proc/1/environ'] ?? false, false, 'pid 1 is not the host init');
    assert.match(r.reads['/etc/shadow'] ?? '', /^ERR:/);
    assert.equal(r.writes['edited.txt'], 'ok');
    // The Git metadata is bound read-only: the agent cannot plant a hook or change the config.
    for (const kind of ['hook', 'config']) assert.match(r.tamper[kind] ?? '', /^ERR:EROFS$/, kind);
    // (A write under /tmp lands in the sandbox's private tmpfs, never on the host.)
    assert.ok(!existsSync(path.join(world.app.settings.dataDir, 'planted')), 'wrote into the data directory');
    for (const [target, outcome] of Object.entries(r.connects))
      assert.match(outcome, /^ERR:/, `${target} was reachable from the sandbox`);
    assert.equal(r.fetches['/api/auth/me'], '403', 'only the proxy prefix passes the gate');
    assert.equal(r.fetches['/api/remote/llm-proxy/../../auth/me'], '403');
    assert.match(r.fetches[`http://127.0.0.1:${apiPort}/livez`] ?? '', /^ERR:/);
    // The data directory shows only the mount points of this run's own home, none of its files.
    const listed = (r.lists[world.app.settings.dataDir] ?? '').replace(/^ok:/, '').split(',');
    for (const name of ['dev-secrets.json', 'config.json', 'svc.sqlite', 'marker', 'projects'])
      assert.ok(!listed.includes(name), `${name} is visible in the data directory: ${listed}`);
    assert.match(r.lists[os.homedir()] ?? 'ERR:', /^(ERR:|ok:$)/);
    assert.notEqual(r.uid, 0, 'not root inside');
    // Nothing of the service's environment.
    for (const name of Object.keys(r.env)) assert.ok(!/^(SVC_|DATABASE_|SECRET|TEMPORAL)/.test(name), name);
  });

  test('the same sandbox lets a step edit its worktree and call the model through the proxy', async () => {
    world.app.settings.autonomous.cli_paths = { cli_beta: FAKE_CLI };
    const { workflowId, worktree } = await newWorkflow(world);
    writeScript(worktree, { steps: [{ write: { path: 'feature.txt', content: 'done' } }, { call: 2 }] });
    const before = modelCalls(world.mock);
    const result = await step(workflowId, worktree);
    assert.equal(result.outcome, 'ok', JSON.stringify(result));
    assert.equal(readFileSync(path.join(worktree, 'feature.txt'), 'utf8'), 'done');
    assert.equal(modelCalls(world.mock) - before, 2);
    assert.equal(result.usage.requests, 2);
  });

  test('without bubblewrap the step is refused with the reason and the fix; nothing runs', async () => {
    world.app.settings.autonomous.cli_paths = { cli_beta: FAKE_CLI };
    const { workflowId, worktree } = await newWorkflow(world);
    writeScript(worktree, { steps: [{ write: { path: 'ran.txt', content: 'x' } }, { call: 1 }] });
    const before = modelCalls(world.mock);
    process.env.SVC_BWRAP_PATH = '/nonexistent/bwrap';
    forgetSandboxProbe();
    try {
      const result = await step(workflowId, worktree);
      assert.equal(result.outcome, 'runner_failure');
      assert.match(
        result.errorEnvelope?.message ?? '',
        /sandbox unavailable: .*bubblewrap is not installed.*apt-get install bubblewrap/,
      );
      assert.equal(modelCalls(world.mock) - before, 0);
      assert.throws(() => readFileSync(path.join(worktree, 'ran.txt')));
      // /readyz says so (reported, not part of readiness).
      assert.equal(await sandboxCheck(), 'unavailable');
    } finally {
      delete process.env.SVC_BWRAP_PATH;
      forgetSandboxProbe();
    }
  });

  test('the operator off switch runs the step unconfined, with a warning at every run', async () => {
    world.app.settings.autonomous.cli_paths = { cli_beta: FAKE_CLI };
    world.app.settings.SVC_SANDBOX = 'off';
    try {
      const { workflowId, worktree } = await newWorkflow(world);
      writeScript(worktree, { steps: [{ call: 1 }] });
      const result = await step(workflowId, worktree);
      assert.equal(result.outcome, 'ok', JSON.stringify(result));
      assert.equal(await sandboxCheck(), 'off');
    } finally {
      world.app.settings.SVC_SANDBOX = 'on';
    }
  });
});
