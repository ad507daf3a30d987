// Which paths the agent account needs access to for one run, and the ACL entries that give exactly
// that (spec document 2, "Execution isolation rules"), as [path, perms] pairs for acl.ts holdPaths:
//   - traverse (`--x`) on every ancestor directory of a target it could not traverse before;
//   - below the first such closed directory, an explicit deny (`---`) on every sibling entry off the
//     targets' paths that it could otherwise reach through the new traverse grant (the data dir's
//     database file, other projects' repositories, other workflows' worktrees and homes): opening a
//     path for traversal must not open what sits beside it. Entries it could not reach anyway (no
//     "other" bits, not its own) and roots another run's integrity check watches are left alone;
//   - the targets' own entries (the worktree root: `rwx`; Git metadata roots: `r-x` when "other"
//     lacks it). The CLI home is the account's own (agent-home.ts) and needs no entry.
import { lstatSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { isWatched, type Perms } from './acl.ts';

export interface AccountIds {
  uid: number;
  gids: number[];
}

function allowed(st: { uid: number; gid: number; mode: number }, a: AccountIds, bit: number): boolean {
  if (st.uid === a.uid) return (st.mode & (bit << 6)) !== 0;
  if (a.gids.includes(st.gid)) return (st.mode & (bit << 3)) !== 0;
  return (st.mode & bit) !== 0;
}

/** Whether the account could reach anything of the entry on its own (any permission bit for it). */
function reachable(st: { uid: number; gid: number; mode: number }, a: AccountIds): boolean {
  return allowed(st, a, 4) || allowed(st, a, 2) || allowed(st, a, 1);
}

const ancestorsOf = (p: string): string[] => {
  const out: string[] = [];
  let cur = path.dirname(p);
  for (;;) {
    out.unshift(cur);
    const up = path.dirname(cur);
    if (up === cur) return out;
    cur = up;
  }
};

export function planAccess(
  account: AccountIds,
  targets: { path: string; perms: Perms | null }[],
  maxDenies = 10_000,
): [string, Perms][] {
  const out = new Map<string, Perms>();
  const onPath = new Set<string>();
  for (const t of targets) {
    onPath.add(t.path);
    for (const a of ancestorsOf(t.path)) onPath.add(a);
  }
  const denyIn = new Set<string>();
  for (const t of targets) {
    let closedAbove = false;
    for (const dir of ancestorsOf(t.path)) {
      const st = lstatSync(dir);
      if (!allowed(st, account, 1)) {
        out.set(dir, '--x');
        closedAbove = true;
      }
      if (closedAbove) denyIn.add(dir);
    }
    if (t.perms) {
      const st = lstatSync(t.path);
      const needs =
        t.perms === 'rwx' || !(allowed(st, account, 4) && (!st.isDirectory() || allowed(st, account, 1)));
      if (needs) out.set(t.path, t.perms);
    }
  }
  let denies = 0;
  for (const dir of denyIn) {
    for (const name of readdirSync(dir)) {
      const child = path.join(dir, name);
      if (onPath.has(child) || out.has(child) || isWatched(child)) continue;
      const st = lstatSync(child, { throwIfNoEntry: false });
      if (!st || st.isSymbolicLink() || !reachable(st, account)) continue;
      out.set(child, '---');
      if (++denies > maxDenies)
        throw new Error(`more than ${maxDenies} entries to deny beside the agent's paths`);
    }
  }
  return [...out];
}
