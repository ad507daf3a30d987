// Execution isolation of the autonomous agent (issue 15 item 5; spec document 2 "Execution isolation
// rules"), with real components: the API's model proxy and database, real processes started as the
// test agent account, real POSIX ACLs (setfacl) and real git repositories. The probe CLI
// (test/fixtures/isolation-probe-cli.mjs) does what an escaping agent would: it dumps its environment,
// reads the server's environment and the data dir's secrets, writes outside the worktree and into the
// Git metadata, and leaves a daemon behind. Isolated tests need root (the runner switches accounts);
// without it they are skipped with the printed reason.
// store-independent: OS accounts, ACLs and processes of the isolated agent, not what the store keeps
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { getAdapter } from '../../../agent/adapters.ts';
import { classifyStepResult } from '../../../domain/autonomous/errors.ts';
import { lineHomePath } from '../../../services/autonomous/runner/cli-home.ts';
import { AGENT_PATH } from '../../../services/autonomous/runner/isolation/agent-env.ts';
import { cgroupAvailability } from '../../../services/autonomous/runner/isolation/cgroup.ts';
import { cliRunner, type RunCliInput } from '../../../services/autonomous/runner/run-cli.ts';
import { gitIn } from '../../fixtures/git-repo.ts';
import { aclEntriesFor, ensureTestAgent, PROBE_CLI, TEST_AGENT } from './isolation-support.ts';
import { newWorkflow, type RunnerWorld, startRunnerWorld } from './runner-support.ts';

const agent = ensureTestAgent();
const skip = typeof agent === 'string' ? agent : false;
if (skip) console.log(`# isolated runner tests skipped: ${skip}`);

let world: RunnerWorld;
let runner: ReturnType<typeof cliRunner>;
const CANARY = `canary-${randomBytes(12).toString('hex')}`;

before(async () => {
  process.env.SVC_ISOLATION_CANARY = CANARY;
  world = await startRunnerWorld({
    env: { SVC_AUTONOMOUS_AGENT_USER: TEST_AGENT, SVC_AUTONOMOUS_ISOLATION: 'required' },
  });
  world.app.settings.autonomous.cli_paths = { cli_beta: PROBE_CLI };
  runner = cliRunner(
    { database: world.app.database, settings: world.app.settings, now: () => new Date() },
    { pollMs: 150, heartbeatMs: 100, graceMs: 1000 },
  );
});
after(async () => {
  delete process.env.SVC_ISOLATION_CANARY;
  await world?.close();
});

const input = (workflowId: string, worktree: string, probe: Record<string, unknown>): RunCliInput => ({
  workflowId,
  line: 'main',
  prompt: JSON.stringify({ probe }),
  worktreePath: worktree,
  cliTool: 'cli_beta',
});
const setMode = (mode: 'required' | 'auto' | 'off', user = TEST_AGENT) => {
  world.app.settings.SVC_AUTONOMOUS_ISOLATION = mode;
  world.app.settings.SVC_AUTONOMOUS_AGENT_USER = user;
};
const report = (worktree: string) =>
  JSON.parse(readFileSync(path.join(worktree, '.svc-fake', 'report.json'), 'utf8')) as {
    env: Record<string, string>;
    uid: number;
    gid: number;
    groups: number[];
    reads: Record<string, string>;
    secretsIn: Record<string, boolean>;
    writes: Record<string, string>;
    tamper: Record<string, string>;
  };
/** Git with the fixed test identity and no user or system config (test/fixtures/git-repo.ts). */
const git = gitIn;

/** A bare repository in a closed (0700) forge-like dir beside another project's, and a linked worktree. */
function forgeLayout(): { forge: string; bare: string; other: string; worktree: string } {
  const forge = path.join(world.app.settings.dataDir, `forge-${randomBytes(4).toString('hex')}`);
  mkdirSync(forge, { mode: 0o700 });
  const seed = mkdtempSync(path.join(os.tmpdir(), 'svc-seed-'));
  git(seed, 'init', '-q', '-b', 'main');
  writeFileSync(path.join(seed, 'README.md'), '# project\n');
  git(seed, 'add', '-A');
  git(seed, 'commit', '-q', '-m', 'initial');
  const bare = path.join(forge, '1.git');
  const other = path.join(forge, '2.git');
  execFileSync('git', ['clone', '-q', '--bare', seed, bare]);
  execFileSync('git', ['clone', '-q', '--bare', seed, other]);
  mkdirSync(path.join(forge, 'worktrees'));
  const worktree = path.join(forge, 'worktrees', 'wf');
  execFileSync('git', ['--git-dir', bare, 'worktree', 'add', '-q', '-b', 'svc/wf', worktree, 'main']);
  return { forge, bare, other, worktree };
}

describe('isolated agent runs', { skip }, () => {
  test('the agent gets an empty environment, its own account, and none of the server secrets', async () => {
    setMode('required');
    const { workflowId, worktree } = await newWorkflow(world);
    const dataDir = world.app.settings.dataDir;
    // The worst case of a data dir file: world-readable (the deny beside the traverse grant covers it).
    writeFileSync(path.join(dataDir, 'leaky-settings.json'), JSON.stringify({ key: CANARY }), {
      mode: 0o644,
    });
    writeFileSync(path.join(dataDir, 'dev-secrets.json'), JSON.stringify({ encryption_key: CANARY }), {
      mode: 0o600,
    });
    const reads = [
      '/proc/1/environ',
      `/proc/${process.pid}/environ`,
      path.join(dataDir, 'leaky-settings.json'),
      path.join(dataDir, 'dev-secrets.json'),
      ...(existsSync(path.join(dataDir, 'svc.sqlite')) ? [path.join(dataDir, 'svc.sqlite')] : []),
      '/root/.bashrc',
      '/etc/shadow',
    ];
    const outside = path.join(dataDir, 'autonomous', 'forged.txt');
    const r = await runner.run(
      input(workflowId, worktree, {
        report: '.svc-fake/report.json',
        reads,
        writes: [
          { path: 'src/ok.txt', content: 'agent work\n' },
          { path: '.git/hooks/pre-commit', content: '#!/bin/sh\n' },
          { path: outside, content: 'x' },
        ],
        escape: '.svc-fake/escaped.pid',
      }),
    );
    assert.equal(r.outcome, 'ok', JSON.stringify(r.errorEnvelope));
    assert.ok(!r.integrityViolation);
    const rep = report(worktree);
    const account = agent as { uid: number; gid: number };
    assert.equal(rep.uid, account.uid);
    assert.equal(rep.gid, account.gid);
    assert.ok(
      rep.groups.every((g) => g === account.gid),
      `supplementary groups dropped: ${rep.groups}`,
    );
    // Exactly the CLI's variables: nothing of the service's environment.
    const adapter = getAdapter('cli_beta');
    const allowed = new Set([
      'PATH',
      'HOME',
      'LANG',
      adapter.keyVar,
      adapter.baseUrlVar,
      ...Object.keys(adapter.extraEnv),
      'PWD', // set by bubblewrap (the sandbox's working directory)
    ]);
    const home = lineHomePath(dataDir, workflowId, 'main');
    for (const k of Object.keys(rep.env))
      assert.ok(allowed.has(k) || k.startsWith('CLAUDE_CONFIG'), `unexpected variable ${k}`);
    assert.equal(rep.env.PATH, AGENT_PATH);
    assert.equal(rep.env.HOME, home);
    assert.equal(rep.env.SVC_ISOLATION_CANARY, undefined);
    assert.equal(rep.env.DATABASE_URL, undefined);
    const flat = JSON.stringify(rep);
    for (const secret of [CANARY, 'test-encryption-key', 'test-secret-key', 'real-anthropic-key-0123456789'])
      assert.ok(!flat.includes(secret), `the probe saw ${secret.slice(0, 12)}...`);
    // Refused or absent; pid 1 is the sandbox's own first process (its own pid namespace), whose
    // environment is the CLI's own and holds nothing of the service's.
    for (const p of reads)
      if (p === '/proc/1/environ' && rep.reads[p]?.startsWith('ok:'))
        assert.equal(rep.secretsIn[p], false, p);
      else assert.match(rep.reads[p]!, /^ERR:(EACCES|EPERM|ENOENT)$/, `${p}: ${rep.reads[p]}`);
    assert.equal(rep.writes['src/ok.txt'], 'ok');
    // EACCES from the account's rights, or EROFS from the sandbox's read-only binds, whichever is first.
    assert.match(rep.writes['.git/hooks/pre-commit']!, /^ERR:(EACCES|EROFS)$/);
    // (Outside the worktree a write fails, or lands in the sandbox's private /tmp: never on the host.)
    assert.ok(!existsSync(outside), `${outside}: ${rep.writes[outside]}`);
    assert.ok(!existsSync(path.join(worktree, '.git', 'hooks', 'pre-commit')));
    // The daemon that left the CLI's process group is gone (its pid is the sandbox namespace's: no
    // process of the account is left at all), and so is every process of the account.
    assert.ok(Number(readFileSync(path.join(worktree, '.svc-fake', 'escaped.pid'), 'utf8')) > 0);
    const accountProcesses = () => {
      try {
        return execFileSync('pgrep', ['-u', String(account.uid)], { encoding: 'utf8' }).trim();
      } catch {
        return '';
      }
    };
    for (let i = 0; i < 100 && accountProcesses(); i++) await sleep(50);
    assert.equal(accountProcesses(), '', 'a process of the account is left');
    // Grants revoked: no entry of the account left in the worktree or the data dir; its files are the service's.
    assert.deepEqual(aclEntriesFor(account.uid, worktree), []);
    assert.deepEqual(aclEntriesFor(account.uid, dataDir), []);
    assert.equal(statSync(path.join(worktree, 'src', 'ok.txt')).uid, process.getuid?.());
    assert.equal(statSync(home).uid, account.uid, 'the CLI home stays the account own');
    // Nothing of the canary reached the logs either.
    assert.ok(!world.app.logs.join('').includes(CANARY));
  });

  test('a linked worktree of a closed forge dir: read-only metadata, other repositories out of reach', async () => {
    setMode('required');
    const { workflowId } = await newWorkflow(world);
    const f = forgeLayout();
    const mainBefore = git(f.worktree, 'rev-parse', 'HEAD');
    const r = await runner.run(
      input(workflowId, f.worktree, {
        report: '.svc-fake/report.json',
        reads: [path.join(f.bare, 'HEAD'), path.join(f.other, 'HEAD'), path.join(f.other, 'config')],
        writes: [{ path: 'feature.txt', content: 'x\n' }],
        tamper: ['hook', 'config', 'object', 'index'],
      }),
    );
    assert.equal(r.outcome, 'ok', JSON.stringify(r.errorEnvelope));
    const rep = report(f.worktree);
    assert.match(rep.reads[path.join(f.bare, 'HEAD')]!, /^ok:/, 'its own repository is readable');
    // Not even there (the sandbox binds only this worktree's metadata, read-only), or not readable.
    assert.match(rep.reads[path.join(f.other, 'HEAD')]!, /^ERR:(EACCES|ENOENT)$/, 'another project is not');
    for (const kind of ['hook', 'config', 'object', 'index'])
      assert.match(rep.tamper[kind]!, /^ERR:(EACCES|EROFS|ENOENT)$/, `${kind}: ${rep.tamper[kind]}`);
    assert.equal(rep.writes['feature.txt'], 'ok');
    assert.equal(git(f.worktree, 'rev-parse', 'HEAD'), mainBefore);
    const uid = (agent as { uid: number }).uid;
    assert.deepEqual(aclEntriesFor(uid, f.forge), [], 'every grant and deny revoked');
    assert.deepEqual(aclEntriesFor(uid, world.app.settings.dataDir), []);
    assert.equal((statSync(f.forge).mode & 0o777).toString(8), '700');
  });

  test('required isolation without the account refuses the step before the CLI starts', async () => {
    setMode('required', 'svc-agent-absent');
    try {
      const { workflowId, worktree } = await newWorkflow(world);
      const r = await runner.run(input(workflowId, worktree, { report: '.svc-fake/report.json' }));
      assert.equal(r.outcome, 'runner_failure');
      assert.match(r.errorEnvelope!.message, /isolation is required .*svc-agent-absent does not exist/);
      assert.equal(r.errorEnvelope!.code, 'isolation_refused');
      assert.ok(!existsSync(path.join(worktree, '.svc-fake', 'report.json')), 'no CLI ran');
    } finally {
      setMode('required');
    }
  });

  test('a CLI the account cannot execute is refused clearly', async () => {
    setMode('required');
    const closed = mkdtempSync(path.join(os.tmpdir(), 'svc-closed-cli-'));
    const exe = path.join(closed, 'probe.mjs');
    copyFileSync(PROBE_CLI, exe);
    chmodSync(exe, 0o755);
    world.app.settings.autonomous.cli_paths = { cli_beta: exe };
    try {
      const { workflowId, worktree } = await newWorkflow(world);
      const r = await runner.run(input(workflowId, worktree, { report: '.svc-fake/report.json' }));
      assert.equal(r.outcome, 'runner_failure');
      assert.match(r.errorEnvelope!.message, /is not executable by the agent account svc-agent-test/);
      assert.deepEqual(aclEntriesFor((agent as { uid: number }).uid, worktree), [], 'grants undone');
    } finally {
      world.app.settings.autonomous.cli_paths = { cli_beta: PROBE_CLI };
    }
  });

  test('per-task cgroup v2 limits: applied when available, else a clear refusal for `on`', async (t) => {
    setMode('required');
    const cg = cgroupAvailability();
    const { workflowId, worktree } = await newWorkflow(world);
    world.app.settings.autonomous.agent_task_cgroup_enabled = 'on';
    try {
      const r = await runner.run(
        input(workflowId, worktree, { report: '.svc-fake/report.json', reads: ['/proc/self/cgroup'] }),
      );
      if (!cg.ok) {
        console.log(`# cgroup limits not testable here: ${cg.reason}`);
        assert.equal(r.outcome, 'runner_failure');
        assert.match(r.errorEnvelope!.message, /per-task cgroup limits are on .* but unavailable/);
        t.diagnostic(`cgroup v2 unavailable: ${cg.reason}`);
        return;
      }
      assert.equal(r.outcome, 'ok', JSON.stringify(r.errorEnvelope));
      const rep = report(worktree);
      assert.match(rep.reads['/proc/self/cgroup']!, /^ok:/);
    } finally {
      world.app.settings.autonomous.agent_task_cgroup_enabled = 'auto';
    }
  });
});

describe('Git metadata integrity around every run', () => {
  // The integrity check is the layer behind the sandbox (which binds the metadata read-only, so these
  // writes would not even happen): tested here on its own, the sandbox off.
  before(() => {
    world.app.settings.SVC_SANDBOX = 'off';
  });
  after(() => {
    world.app.settings.SVC_SANDBOX = 'on';
  });
  test('an agent (running as the service account: isolation off) that writes a hook, the config or an object fails closed with exit code 68', async () => {
    setMode('off');
    try {
      for (const kind of ['hook', 'config', 'object', 'index']) {
        const { workflowId, worktree } = await newWorkflow(world);
        git(worktree, 'add', '-A');
        git(worktree, 'commit', '-q', '-m', 'initial');
        const r = await runner.run(
          input(workflowId, worktree, { tamper: [kind], report: '.svc-fake/report.json' }),
        );
        assert.equal(report(worktree).tamper[kind], 'ok', `${kind}: the write went through`);
        assert.equal(r.exitCode, 68, kind);
        assert.equal(r.integrityViolation, true);
        assert.equal(r.errorEnvelope?.code, 'SVC_REPO_INTEGRITY_VIOLATION');
        assert.match(r.errorEnvelope!.message, /^SVC_REPO_INTEGRITY_VIOLATION: Git metadata changed/);
        assert.deepEqual(classifyStepResult(r), { class: 'repo_integrity_violation' });
      }
    } finally {
      setMode('required');
    }
  });

  test('a linked worktree: a hook written into the bare repository is caught; edits of the working tree are not', async () => {
    setMode('off');
    try {
      const { workflowId } = await newWorkflow(world);
      const f = forgeLayout();
      const clean = await runner.run(
        input(workflowId, f.worktree, { writes: [{ path: 'feature.txt', content: 'x\n' }] }),
      );
      assert.equal(clean.outcome, 'ok');
      assert.ok(!clean.integrityViolation);
      const bad = await runner.run(input(workflowId, f.worktree, { tamper: ['hook'] }));
      assert.equal(bad.exitCode, 68);
      assert.match(bad.errorEnvelope!.message, /added .*hooks\/pre-commit/);
    } finally {
      setMode('required');
    }
  });

  test('isolated runs with the launcher ACLs in place do not trip the check', { skip }, async () => {
    setMode('required');
    const { workflowId } = await newWorkflow(world);
    const f = forgeLayout();
    // A metadata root "other" cannot read gets the launcher's read grant (and its mask) before the snapshot.
    chmodSync(f.bare, 0o700);
    for (let i = 0; i < 2; i++) {
      const r = await runner.run(
        input(workflowId, f.worktree, {
          writes: [{ path: `f${i}.txt`, content: 'x\n' }],
          report: '.svc-fake/report.json',
        }),
      );
      assert.equal(r.outcome, 'ok', JSON.stringify(r.errorEnvelope));
      assert.ok(!r.integrityViolation);
    }
  });
});
