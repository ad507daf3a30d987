// Multi-user machines (spec document 2, users.system_account): a session whose user has an OS account
// on record runs as that account, when the agent was installed with the right to switch (it runs as
// root). The account is looked up on this machine; root, and names that are not plain user names, are
// refused. An agent without the right runs every session as its own account, in the sandbox.
import { execFileSync } from 'node:child_process';

export interface SystemAccount {
  name: string;
  uid: number;
  gid: number;
}

const NAME = /^[a-z_][a-z0-9_-]{0,31}$/;

export type AccountDecision =
  | { kind: 'none' }
  | { kind: 'switch'; account: SystemAccount }
  | { kind: 'unavailable'; reason: string }
  | { kind: 'refused'; reason: string };

export function decideSystemAccount(
  name: string | undefined,
  agentUid = process.getuid?.() ?? -1,
): AccountDecision {
  if (!name) return { kind: 'none' };
  if (!NAME.test(name))
    return { kind: 'refused', reason: `system_account "${name.slice(0, 40)}" is not a user name` };
  let uid: number;
  let gid: number;
  try {
    uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
    gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
  } catch {
    return { kind: 'refused', reason: `system_account ${name} does not exist on this machine` };
  }
  if (uid === 0 || gid === 0) return { kind: 'refused', reason: `system_account ${name} is root` };
  if (agentUid !== 0)
    return {
      kind: 'unavailable',
      reason: `the agent runs as uid ${agentUid}, without the right to switch to ${name}: the session runs as the agent's account, in the sandbox`,
    };
  return { kind: 'switch', account: { name, uid, gid } };
}
