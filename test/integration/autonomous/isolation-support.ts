// Shared setup of the execution-isolation tests: the test agent account (created when the tests run as
// root, with the same installer as `npm run agent-account:install`; otherwise the isolated tests are
// skipped with the printed reason), the isolation probe CLI, and ACL / ownership readers.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { findAccount } from '../../../services/autonomous/runner/isolation/agent-account.ts';
import { installAgentAccount } from '../../../services/autonomous/runner/isolation/install-account.ts';

export const TEST_AGENT = 'svc-agent-test';
export const PROBE_CLI = path.resolve('test/fixtures/isolation-probe-cli.mjs');

/** The test agent account, created if needed; a reason string when isolated tests cannot run here. */
export function ensureTestAgent(): { uid: number; gid: number } | string {
  if ((process.getuid?.() ?? -1) !== 0)
    return `not running as root (uid ${process.getuid?.()}): the runner cannot switch to an agent account`;
  try {
    const r = installAgentAccount(TEST_AGENT);
    if (!r.ok) return r.reason;
    return { uid: r.account.uid, gid: r.account.gid };
  } catch (err) {
    // Another test file created it at the same moment.
    const a = findAccount(TEST_AGENT);
    return a ? { uid: a.uid, gid: a.gid } : `could not create ${TEST_AGENT}: ${(err as Error).message}`;
  }
}

/** Every `user:<uid>:` ACL entry under `dir` (getfacl -R), as `path user:uid:perms` lines. */
export function aclEntriesFor(uid: number, dir: string): string[] {
  const out: string[] = [];
  let text = '';
  try {
    text = execFileSync('getfacl', ['-R', '-P', '-s', '-p', '-n', '--', dir], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (err) {
    text = (err as { stdout?: string }).stdout ?? '';
  }
  let file = '';
  for (const line of text.split('\n')) {
    if (line.startsWith('# file: ')) file = line.slice(8);
    else if (line.startsWith(`user:${uid}:`) || line.startsWith(`default:user:${uid}:`))
      out.push(`${file} ${line}`);
  }
  return out;
}
