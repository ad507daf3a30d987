// Creates the agent account (`npm run agent-account:install`, bin/agent-account-install.ts), or checks
// an existing one: a system user with its own group, no login shell (/usr/sbin/nologin), no home
// directory (/nonexistent: nothing to hold credentials; the runner gives every run its own HOME), a
// locked password, in no other group. Idempotent; the result is checked with the same rules the
// runner applies (agent-account.ts), so an account that would be refused is reported, not accepted.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { type AccountCheck, findAccount, lookupAgentAccount } from './agent-account.ts';

const NOLOGIN =
  ['/usr/sbin/nologin', '/sbin/nologin', '/bin/false'].find((p) => existsSync(p)) ?? '/bin/false';

export function installAgentAccount(name: string): AccountCheck & { created: boolean } {
  if ((process.getuid?.() ?? -1) !== 0)
    return { ok: false, reason: 'run this as root (it creates a system user)', created: false };
  let created = false;
  if (!findAccount(name)) {
    execFileSync(
      'useradd',
      [
        '--system',
        '--user-group',
        '--no-create-home',
        '--home-dir',
        '/nonexistent',
        '--shell',
        NOLOGIN,
        '--comment',
        'autonomous agent runner (no login)',
        name,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    created = true;
  }
  const check = lookupAgentAccount(name, { serviceUid: 0 });
  return { ...check, created };
}
