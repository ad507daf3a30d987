// Units of the agent launcher (services/autonomous/runner/isolation/): the ACL-aware metadata snapshot
// (real files, real getfacl/setfacl), the access plan over real directories, the cgroup v2 detection
// from mountinfo text, the task cgroup's files (written into a directory laid out like a cgroup; the
// kernel itself is the outside world here), and the isolation decision for each mode.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { loadSettings } from '../../config/settings.ts';
import { planAccess } from '../../services/autonomous/runner/isolation/access-plan.ts';
import {
  cgroup2Mount,
  createTaskCgroup,
  TASK_LIMITS,
} from '../../services/autonomous/runner/isolation/cgroup.ts';
import { decideIsolation } from '../../services/autonomous/runner/isolation/decide.ts';
import {
  compareMetadata,
  locateGitMetadata,
  snapshotMetadata,
} from '../../services/autonomous/runner/isolation/git-metadata.ts';

const tmp = (p: string) => mkdtempSync(path.join(os.tmpdir(), p));

/** A bare repository with one commit on main (the local forge's layout), in a fresh directory. */
function forgeRepository(prefix: string): { root: string; bare: string } {
  const seed = tmp('svc-iso-seed-');
  execFileSync('git', ['init', '-q', '-b', 'main', seed]);
  writeFileSync(path.join(seed, 'a'), 'a');
  execFileSync('git', ['-C', seed, 'add', '-A']);
  execFileSync('git', ['-C', seed, '-c', 'user.name=t', '-c', 'user.email=t@x', 'commit', '-q', '-m', 'a']);
  const root = tmp(prefix);
  const bare = path.join(root, 'p.git');
  execFileSync('git', ['clone', '-q', '--bare', seed, bare]);
  return { root, bare };
}
const NOBODY = 65534;

describe('Git metadata snapshot with ACLs', () => {
  test('an ACL entry added on a metadata file is a change; the same state twice is none', async () => {
    const wt = tmp('svc-iso-unit-');
    execFileSync('git', ['init', '-q', wt]);
    const loc = locateGitMetadata(wt);
    assert.deepEqual(
      loc.roots.map((r) => r.dir),
      [path.join(wt, '.git')],
    );
    const before = await snapshotMetadata(loc);
    assert.deepEqual(compareMetadata(before, await snapshotMetadata(loc)), []);
    execFileSync('setfacl', ['-m', `u:${NOBODY}:r`, path.join(wt, '.git', 'config')]);
    const changes = compareMetadata(before, await snapshotMetadata(loc));
    assert.equal(changes.length, 1);
    assert.equal(changes[0]!.path, `${path.join(wt, '.git')}:config`);
    assert.ok(changes[0]!.fields.includes('acl'), changes[0]!.fields.join(','));
  });

  test('a linked worktree: the common dir without other worktrees admin dirs, and `.git` itself', async () => {
    const { root, bare } = forgeRepository('svc-iso-forge-');
    const one = path.join(root, 'one');
    const two = path.join(root, 'two');
    execFileSync('git', ['--git-dir', bare, 'worktree', 'add', '-q', '-b', 'b1', one, 'main']);
    execFileSync('git', ['--git-dir', bare, 'worktree', 'add', '-q', '-b', 'b2', two, 'main']);
    const loc = locateGitMetadata(one);
    assert.equal(loc.ownRef, 'refs/heads/b1');
    const before = await snapshotMetadata(loc);
    // Another workflow's orchestrator commits on its branch: its admin dir is never watched; its new
    // objects and its branch's ref are tolerated when the run is isolated (the agent, here uid 65534,
    // cannot write there), and are changes when it is not (the agent would be the service account).
    writeFileSync(path.join(two, 'b'), 'b');
    execFileSync('git', ['-C', two, 'add', '-A']);
    execFileSync('git', ['-C', two, '-c', 'user.name=t', '-c', 'user.email=t@x', 'commit', '-q', '-m', 'b']);
    const isolated = { loc, agentUid: NOBODY };
    assert.deepEqual(compareMetadata(before, await snapshotMetadata(loc), isolated), []);
    assert.deepEqual(compareMetadata(before, await snapshotMetadata(loc), { loc }), []);
    // Without the shared-directory rules (a plain `.git`), the same writes are changes.
    const strict = compareMetadata(before, await snapshotMetadata(loc)).map((c) => c.path);
    assert.ok(
      strict.some((c) => c.includes(':objects/')),
      strict.join('\n'),
    );
    assert.ok(
      strict.some((c) => c.endsWith(':refs/heads/b2')),
      strict.join('\n'),
    );
    // A planted object that does not hash to its name is a change in every mode.
    mkdirSync(path.join(bare, 'objects', 'ee'), { recursive: true });
    writeFileSync(path.join(bare, 'objects', 'ee', 'a'.repeat(38)), 'not an object');
    const planted = compareMetadata(before, await snapshotMetadata(loc), isolated).map((c) => c.path);
    assert.deepEqual(planted, [`${bare}:objects/ee/${'a'.repeat(38)}`]);
    // Our own branch, the config, hooks, and `.git` replaced stay changes even when isolated.
    execFileSync('git', [
      '-C',
      one,
      '-c',
      'user.name=t',
      '-c',
      'user.email=t@x',
      'commit',
      '-q',
      '--allow-empty',
      '-m',
      'own',
    ]);
    writeFileSync(path.join(bare, 'hooks', 'post-checkout'), '#!/bin/sh\n');
    const own = compareMetadata(before, await snapshotMetadata(loc), { loc }).map((c) => c.path);
    assert.ok(
      own.some((c) => c.endsWith(':refs/heads/b1')),
      own.join('\n'),
    );
    assert.ok(
      own.some((c) => c.endsWith(':hooks/post-checkout')),
      own.join('\n'),
    );
    execFileSync('git', ['-C', one, 'update-ref', 'refs/heads/x', 'HEAD']);
    writeFileSync(path.join(one, '.git'), `gitdir: ${path.join(bare, 'worktrees', 'two')}\n`);
    const changes = compareMetadata(before, await snapshotMetadata(loc)).map((c) => c.path);
    assert.ok(changes.includes(`${path.join(one, '.git')}:.`), changes.join('\n'));
    assert.ok(
      changes.some((c) => c.endsWith(':refs/heads/x')),
      changes.join('\n'),
    );
  });
});

describe('two workflows of one project overlapping', () => {
  test("the other workflow's preparation and cleanup in the shared bare repository are no change; our own admin dir stays strict", async () => {
    const { root, bare } = forgeRepository('svc-iso-overlap-');
    const worktrees = path.join(root, 'worktrees');
    mkdirSync(worktrees);
    const one = path.join(worktrees, 'wf-one');
    execFileSync('git', ['--git-dir', bare, 'worktree', 'add', '--quiet', '-b', 'wf/one', '--', one, 'main']);
    const loc = locateGitMetadata(one);
    const before = await snapshotMetadata(loc);
    // The other workflow, as services/autonomous/workspace.ts prepares and cleans up its worktree
    // (services/forge/local-repositories.ts: worktree add, worktree remove + prune, update-ref -d),
    // over and over while our run's snapshots walk the same bare repository.
    const cycles = path.join(root, 'cycles');
    const two = path.join(worktrees, 'wf-two');
    const other = spawn(
      'bash',
      [
        '-c',
        'while true; do git --git-dir "$1" worktree add --quiet -b wf/two -- "$2" main; ' +
          'git --git-dir "$1" worktree remove --force --force -- "$2"; git --git-dir "$1" worktree prune; ' +
          'git --git-dir "$1" update-ref -d refs/heads/wf/two; echo x >> "$3"; done',
        'other',
        bare,
        two,
        cycles,
      ],
      { stdio: 'ignore' },
    );
    const done = () => (existsSync(cycles) ? readFileSync(cycles, 'utf8').length / 2 : 0);
    const seen: string[] = [];
    let rounds = 0;
    try {
      while (rounds < 40 || done() < 30) {
        rounds++;
        try {
          for (const c of compareMetadata(before, await snapshotMetadata(loc), { loc }))
            seen.push(`${c.change} ${c.path}`);
        } catch (err) {
          seen.push(`snapshot failed: ${(err as Error).message.split('\n')[0]}`);
        }
      }
    } finally {
      other.kill();
    }
    assert.deepEqual(seen, [], `${seen.length} of ${rounds} rounds saw changes`);
    // Our own admin directory is not another workflow's: a change there is one.
    writeFileSync(path.join(bare, 'worktrees', 'wf-one', 'config.worktree'), '[core]\n\thooksPath = /tmp\n');
    const own = compareMetadata(before, await snapshotMetadata(loc), { loc }).map((c) => c.path);
    assert.deepEqual(own, [`${bare}:worktrees/wf-one/config.worktree`]);
  });
});

describe('access plan', () => {
  test('traverse on closed ancestors, deny beside the path inside them, nothing in open directories', () => {
    const base = tmp('svc-iso-plan-'); // 0700: closed to others
    const data = path.join(base, 'data');
    mkdirSync(path.join(data, 'forge', 'worktrees', 'wf'), { recursive: true });
    mkdirSync(path.join(data, 'forge', 'worktrees', 'other'), { recursive: true });
    writeFileSync(path.join(data, 'svc.sqlite'), 'db', { mode: 0o644 });
    writeFileSync(path.join(data, 'secret'), 's', { mode: 0o600 });
    const plan = new Map(
      planAccess({ uid: NOBODY, gids: [NOBODY] }, [
        { path: path.join(data, 'forge', 'worktrees', 'wf'), perms: 'rwx' },
      ]),
    );
    assert.equal(plan.get(base), '--x');
    assert.equal(plan.get(path.join(data, 'forge', 'worktrees', 'wf')), 'rwx');
    assert.equal(plan.get(path.join(data, 'svc.sqlite')), '---', 'a readable file beside the path is denied');
    assert.equal(plan.get(path.join(data, 'forge', 'worktrees', 'other')), '---');
    assert.equal(plan.has(path.join(data, 'secret')), false, 'already unreachable: left alone');
    assert.equal(plan.has('/tmp'), false);
    assert.equal(plan.has(data), false, 'an open directory on the path needs nothing');
  });
});

describe('cgroup v2', () => {
  test('the cgroup2 mount is found in mountinfo text, or none', () => {
    const hybrid =
      '30 25 0:26 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n' +
      '31 25 0:27 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n';
    assert.equal(cgroup2Mount(hybrid), '/sys/fs/cgroup/unified');
    assert.equal(cgroup2Mount('30 25 0:26 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n'), null);
    assert.equal(
      cgroup2Mount('28 1 0:25 / /sys/fs/cgroup rw shared:9 - cgroup2 cgroup2 rw,nsdelegate\n'),
      '/sys/fs/cgroup',
    );
  });

  test('a task cgroup gets the spec limits and its controllers enabled above it', async () => {
    const mount = tmp('svc-iso-cgroup-');
    writeFileSync(path.join(mount, 'cgroup.subtree_control'), '');
    const cg = createTaskCgroup(mount, 'wf-1/main', () => undefined);
    const read = (f: string) => readFileSync(path.join(cg.dir, f), 'utf8');
    assert.equal(path.dirname(cg.dir), path.join(mount, 'svc-agent'));
    assert.equal(read('memory.max'), '2147483648');
    assert.equal(read('pids.max'), '512');
    assert.equal(read('cpu.max'), '200000 100000');
    assert.equal(TASK_LIMITS.wallClockSeconds, 3600);
    assert.equal(readFileSync(path.join(mount, 'cgroup.subtree_control'), 'utf8'), '+memory +pids +cpu');
    cg.add(4242);
    assert.equal(read('cgroup.procs'), '4242');
    await cg.close().catch(() => undefined);
  });
});

describe('isolation decision', () => {
  const settings = (env: Record<string, string>) =>
    loadSettings({ SVC_DATA_DIR: tmp('svc-iso-set-'), ...env });
  test('off never isolates; a missing account is refused when required and tolerated when auto', () => {
    assert.equal(decideIsolation(settings({ SVC_AUTONOMOUS_ISOLATION: 'off' })).kind, 'unisolated');
    const absent = { SVC_AUTONOMOUS_AGENT_USER: 'svc-agent-nonexistent' };
    const req = decideIsolation(settings({ ...absent, SVC_AUTONOMOUS_ISOLATION: 'required' }));
    assert.equal(req.kind, 'refused');
    assert.match((req as { reason: string }).reason, /required .* (does not exist|does not run as root)/);
    const auto = decideIsolation(settings({ ...absent, SVC_AUTONOMOUS_ISOLATION: 'auto' }));
    assert.equal(auto.kind, 'unisolated');
  });
  test('an account that is root, or in an administrative group, is refused', () => {
    if (process.getuid?.() !== 0) return;
    const root = decideIsolation(
      settings({ SVC_AUTONOMOUS_AGENT_USER: 'root', SVC_AUTONOMOUS_ISOLATION: 'required' }),
    );
    assert.match((root as { reason: string }).reason, /is root/);
  });
  test('the defaults: auto, svc-agent', () => {
    const s = settings({});
    assert.equal(s.SVC_AUTONOMOUS_ISOLATION, 'auto');
    assert.equal(s.SVC_AUTONOMOUS_AGENT_USER, 'svc-agent');
    assert.throws(() => settings({ SVC_AUTONOMOUS_AGENT_USER: 'Bad Name;rm' }));
  });
});
