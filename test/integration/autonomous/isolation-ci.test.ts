// The local forge's CI under execution isolation (issue 15 item 5; services/forge/local-ci.ts `agent`):
// CI runs repository code, so with an isolated decision it runs as the agent account with the same
// environment and access rules as the agent CLI. Real processes, real ACLs, a real linked worktree of a
// bare repository in a closed directory. Needs root (skipped with the printed reason otherwise).
// store-independent: OS accounts and ACLs of CI under isolation, not what the store keeps
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { loadSettings } from '../../../config/settings.ts';
import { decideIsolation } from '../../../services/autonomous/runner/isolation/decide.ts';
import { runCiCommand } from '../../../services/forge/local-ci.ts';
import { aclEntriesFor, ensureTestAgent, TEST_AGENT } from './isolation-support.ts';

const agent = ensureTestAgent();
const skip = typeof agent === 'string' ? agent : false;
if (skip) console.log(`# isolated CI tests skipped: ${skip}`);

function layout() {
  const base = mkdtempSync(path.join(os.tmpdir(), 'svc-iso-ci-')); // 0700
  writeFileSync(path.join(base, 'secret.json'), '{"k":"v"}', { mode: 0o644 });
  const seed = path.join(base, 'seed');
  execFileSync('git', ['init', '-q', '-b', 'main', seed]);
  writeFileSync(path.join(seed, 'a.txt'), 'a\n');
  execFileSync('git', ['-C', seed, 'add', '-A']);
  execFileSync('git', ['-C', seed, '-c', 'user.name=t', '-c', 'user.email=t@x', 'commit', '-q', '-m', 'a']);
  const forge = path.join(base, 'forge');
  mkdirSync(forge);
  const bare = path.join(forge, '1.git');
  execFileSync('git', ['clone', '-q', '--bare', seed, bare]);
  const dir = path.join(forge, 'ci', 'run1');
  mkdirSync(path.dirname(dir));
  execFileSync('git', ['--git-dir', bare, 'worktree', 'add', '-q', '--detach', dir, 'main']);
  return { base, bare, dir };
}

describe('local CI as the agent account', { skip }, () => {
  test('runs as the account, with only its own variables, writing only in its worktree', async () => {
    const canary = `canary-${randomBytes(8).toString('hex')}`;
    process.env.SVC_CI_CANARY = canary;
    try {
      const settings = loadSettings({
        SVC_DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'svc-iso-ci-data-')),
        SVC_AUTONOMOUS_AGENT_USER: TEST_AGENT,
        SVC_AUTONOMOUS_ISOLATION: 'required',
      });
      const decision = decideIsolation(settings);
      assert.equal(decision.kind, 'isolated');
      if (decision.kind !== 'isolated') return;
      const { base, bare, dir } = layout();
      const script = [
        'echo "uid=$(id -u)"',
        'env | sort | sed "s/^/env:/"',
        // Pid 1 is the host's init, unreadable to the account, or the sandbox's own, which holds nothing.
        `cat /proc/1/environ 2>/dev/null | grep -aq SVC_ && echo "read:proc1" || echo "denied:proc1"`,
        `cat ${base}/secret.json >/dev/null 2>&1 && echo "read:secret" || echo "denied:secret"`,
        'echo built > build.txt && echo "wrote:worktree"',
        `echo x > ${base}/escape.txt 2>/dev/null && echo "wrote:outside" || echo "denied:outside"`,
        `echo x > ${bare}/hooks/pre-push 2>/dev/null && echo "wrote:hook" || echo "denied:hook"`,
        'sleep 60 & echo "daemon:$!"',
      ].join('; ');
      const r = await runCiCommand({
        argv: ['sh', '-c', script],
        cwd: dir,
        scratchDir: `${dir}.scratch`,
        timeoutMs: 30_000,
        agent: decision,
      });
      assert.equal(r.status, 'passed', r.logTail);
      const log = r.logTail;
      assert.match(log, new RegExp(`uid=${(agent as { uid: number }).uid}\\b`));
      assert.match(log, /CI runs as the agent account svc-agent-test/);
      const vars = log
        .split('\n')
        .filter((l) => l.startsWith('env:'))
        .map((l) => l.slice(4).split('=')[0]);
      const allowed = [
        'PATH',
        'HOME',
        'TMPDIR',
        'LANG',
        'CI',
        'GIT_CONFIG_NOSYSTEM',
        'GIT_CONFIG_GLOBAL',
        'GIT_TERMINAL_PROMPT',
        'PWD',
        'SHLVL',
        '_',
      ];
      for (const v of vars) assert.ok(allowed.includes(v!), `unexpected variable ${v}`);
      assert.ok(!log.includes(canary));
      // (A write outside lands in the sandbox's private /tmp at most: the host file must not exist.)
      for (const line of ['denied:proc1', 'denied:secret', 'wrote:worktree', 'denied:hook'])
        assert.ok(log.includes(line), `${line}\n${log}`);
      assert.ok(!existsSync(path.join(base, 'escape.txt')));
      // The background job is gone with the run (its pid is the sandbox's: no process works in the CI
      // dir any more), and every grant is revoked.
      assert.ok(Number(/daemon:(\d+)/.exec(log)?.[1]) > 0);
      const inDir = readdirSync('/proc').filter((p) => {
        try {
          return /^\d+$/.test(p) && readlinkSync(`/proc/${p}/cwd`).startsWith(realpathSync(dir));
        } catch {
          return false;
        }
      });
      assert.deepEqual(inDir, [], 'a process of the CI run outlived it');
      assert.deepEqual(aclEntriesFor((agent as { uid: number }).uid, base), []);
    } finally {
      delete process.env.SVC_CI_CANARY;
    }
  });
});
