// The dedicated agent account of the autonomous runner (spec document 2, "Execution isolation rules":
// a dedicated non-root, credential-less account, in no administrative group, distinct from the
// project owner and from the service account). `lookupAgentAccount` reads it from the system's user
// database (getent, so NSS sources count) and refuses an account that breaks one of those rules: the
// reason is returned, never guessed around. `npm run agent-account:install` (bin/agent-account-install.ts)
// creates one that passes.
import { execFileSync } from 'node:child_process';

/** Groups whose members can administer the machine (or become root through a daemon socket). */
export const ADMIN_GROUPS = ['root', 'sudo', 'wheel', 'admin', 'adm', 'docker', 'lxd', 'disk', 'shadow'];

export interface AgentAccount {
  name: string;
  uid: number;
  gid: number;
  home: string;
  shell: string;
}

function getent(db: string, key: string): string | null {
  try {
    return execFileSync('getent', [db, key], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return null;
  }
}

/** The account's passwd entry, or null when there is no such user. */
export function findAccount(name: string): AgentAccount | null {
  const line = getent('passwd', name);
  if (!line) return null;
  const [user, , uid, gid, , home, shell] = line.split('\n')[0]!.split(':');
  if (user !== name || uid === undefined || gid === undefined) return null;
  return { name, uid: Number(uid), gid: Number(gid), home: home ?? '', shell: shell ?? '' };
}

/** Names of every group the account belongs to (primary and supplementary). */
export function groupsOf(name: string): string[] {
  try {
    return execFileSync('id', ['-Gn', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .trim()
      .split(/\s+/)
      .filter(Boolean);
  } catch {
    return [];
  }
}

export type AccountCheck = { ok: true; account: AgentAccount } | { ok: false; reason: string };

/**
 * The agent account, checked against the isolation rules. `serviceUid`: the service's own account;
 * `ownerUids`: accounts that own the project (the worktree's owner): the agent must differ from each.
 */
export function lookupAgentAccount(
  name: string,
  opts: { serviceUid: number; ownerUids?: number[] },
): AccountCheck {
  const account = findAccount(name);
  if (!account) return { ok: false, reason: `the agent account ${name} does not exist` };
  if (account.uid === 0 || account.gid === 0)
    return { ok: false, reason: `the agent account ${name} is root (uid or gid 0)` };
  if (account.uid === opts.serviceUid)
    return { ok: false, reason: `the agent account ${name} is the service's own account` };
  if (opts.ownerUids?.includes(account.uid))
    return { ok: false, reason: `the agent account ${name} owns the project` };
  const admin = groupsOf(name).filter((g) => ADMIN_GROUPS.includes(g));
  if (admin.length)
    return {
      ok: false,
      reason: `the agent account ${name} is in administrative group(s) ${admin.join(', ')}`,
    };
  return { ok: true, account };
}
