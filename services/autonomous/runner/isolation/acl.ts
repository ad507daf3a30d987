// Temporary POSIX ACL grants of the agent account (spec document 2, "Execution isolation rules": write
// access only to working-tree files, read/traverse on Git metadata, grants revoked after every run).
//
// Every grant goes through one in-process registry keyed by path, because runs of several workflows
// share parent directories (the data dir, the worktree root) and the same account: a run's revoke
// must not take away what a concurrent run still holds. Each path keeps the holders' permissions; the
// applied entry `user:<uid>:<perms>` is the union of the holders' permissions, or `---` (an explicit
// deny) when only deny holders remain; when no holder remains the entry is removed (`setfacl -x`), and
// the mask entry that setfacl leaves behind is dropped too when no other named entry needs it, so the
// file's ACL is as it was. Recursive grants on the working tree (setfacl -R) are per run, not shared:
// a worktree belongs to one workflow.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export type Perms = 'rwx' | 'r-x' | '--x' | '---';

async function setfacl(args: string[]): Promise<void> {
  await run('setfacl', args, { maxBuffer: 4 * 1024 * 1024 });
}

/** Removes the user's entry, then the mask when no named entry is left (best effort per path). */
export async function removeUserEntry(uid: number, paths: string[], recursive = false): Promise<void> {
  if (!paths.length) return;
  const r = recursive ? ['-R'] : [];
  await setfacl([...r, '-P', '-x', `u:${uid}`, '--', ...paths]).catch(() => undefined);
  // Fails (harmlessly) on a path whose ACL still has other named entries: their mask stays.
  await setfacl([...r, '-P', '-x', 'm::', '--', ...paths]).catch(() => undefined);
}

const union = (list: Perms[]): Perms => {
  const live = list.filter((p) => p !== '---');
  if (!live.length) return '---';
  const has = (i: number, c: string) => live.some((p) => p[i] === c);
  return `${has(0, 'r') ? 'r' : '-'}${has(1, 'w') ? 'w' : '-'}${has(2, 'x') ? 'x' : '-'}` as Perms;
};

interface PathHolders {
  uid: number;
  holders: Map<string, Perms>;
  applied: Perms | null;
}

const registry = new Map<string, PathHolders>();
// One change at a time: setfacl calls for the same path must apply in the order they were decided.
let queue: Promise<void> = Promise.resolve();
const serial = <T>(fn: () => Promise<T>): Promise<T> => {
  const next = queue.then(fn, fn);
  queue = next.then(
    () => undefined,
    () => undefined,
  );
  return next;
};

// Paths an active run's integrity snapshot covers (roots of Git metadata), with a count of runs: their
// ACL must stay as it was at that run's first snapshot, so a change to them waits until unwatched.
const watched = new Map<string, number>();

async function apply(path: string, entry: PathHolders): Promise<void> {
  const want = entry.holders.size ? union([...entry.holders.values()]) : null;
  if (want === entry.applied) return;
  if (watched.has(path)) return; // applied when the last watcher leaves (unwatchPaths)
  if (want === null) {
    registry.delete(path);
    await removeUserEntry(entry.uid, [path]);
    return;
  }
  await setfacl(['-P', '-m', `u:${entry.uid}:${want}`, '--', path]);
  entry.applied = want;
}

/** Adds `holder`'s permissions on each path (shared, reference-counted by holder). */
export function holdPaths(uid: number, holder: string, grants: [string, Perms][]): Promise<void> {
  return serial(async () => {
    for (const [path, perms] of grants) {
      let entry = registry.get(path);
      if (!entry) {
        entry = { uid, holders: new Map(), applied: null };
        registry.set(path, entry);
      }
      entry.holders.set(holder, perms);
      await apply(path, entry);
    }
  });
}

/** Drops every permission `holder` holds; paths nobody holds any more lose the entry. */
export function releaseHolder(holder: string): Promise<void> {
  return serial(async () => {
    for (const [path, entry] of [...registry]) {
      if (!entry.holders.delete(holder)) continue;
      await apply(path, entry).catch(() => undefined);
    }
  });
}

/** `rwX` for the user on exactly these paths (directories and executables get x), in batches. */
export async function grantWrite(uid: number, paths: string[]): Promise<void> {
  for (let i = 0; i < paths.length; i += 500)
    await setfacl(['-P', '-m', `u:${uid}:rwX`, '--', ...paths.slice(i, i + 500)]);
}

/** Removes the user's entry (and the mask setfacl leaves) from exactly these paths, in batches. */
export async function revokeWrite(uid: number, paths: string[]): Promise<void> {
  for (let i = 0; i < paths.length; i += 500) await removeUserEntry(uid, paths.slice(i, i + 500));
}

/** Read (and traverse for directories and executables) for the user on the given paths, not recursive. */
export async function grantRead(uid: number, paths: string[]): Promise<void> {
  if (paths.length) await setfacl(['-P', '-m', `u:${uid}:rX`, '--', ...paths]);
}

/** Marks Git metadata roots as snapshotted by a run (their ACL entries do not change until released). */
export function watchPaths(paths: string[]): Promise<void> {
  return serial(async () => {
    for (const p of paths) watched.set(p, (watched.get(p) ?? 0) + 1);
  });
}

export function unwatchPaths(paths: string[]): Promise<void> {
  return serial(async () => {
    for (const p of paths) {
      const n = (watched.get(p) ?? 1) - 1;
      if (n > 0) {
        watched.set(p, n);
        continue;
      }
      watched.delete(p);
      const entry = registry.get(p);
      if (entry) await apply(p, entry).catch(() => undefined);
    }
  });
}

/** Whether another run's integrity snapshot covers the path right now. */
export const isWatched = (p: string): boolean => watched.has(p);
