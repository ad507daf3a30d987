// The filesystem half of the Git metadata integrity check (pure half: domain/forge/integrity.ts).
// `snapshotGitDir(dir)` walks the directory without following symlinks and records for every entry
// its type, inode, mode, owner and a SHA-256 of its content (files; symlinks: their target). The walk
// is bounded (MAX_ENTRIES): a Git directory grown past it is itself a violation, reported as such,
// rather than an unbounded scan. Use:
//   const before = await snapshotGitDir(gitDir); ...agent run...; const after = await snapshotGitDir(gitDir);
//   assertUnchanged(before, after)   // RepositoryIntegrityViolationError: exit 68, SVC_REPO_INTEGRITY_VIOLATION
// For a worktree of a bare repository, snapshot the bare repository (it holds the worktree's admin
// directory too). Whatever the agent is allowed to touch must not live under the snapshotted dir.
// Other writers of a shared directory (other workflows' orchestrators) create and delete entries
// while the walk runs: an entry that vanishes between its directory listing and its lstat is left out
// of the snapshot (as if taken a moment later), never an error; only the root itself must be there.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, readdir, readlink } from 'node:fs/promises';
import path from 'node:path';
import {
  type EntryType,
  type IntegrityEntry,
  type IntegritySnapshot,
  RepositoryIntegrityViolationError,
} from '../../domain/forge/integrity.ts';

export const MAX_ENTRIES = 500_000;

async function digestFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * `skip(rel)`: leave a subtree out (e.g. `objects` for speed, or the admin directories of worktrees
 * that other, concurrent workflows legitimately change); the path is `/`-separated and relative.
 */
export async function snapshotGitDir(
  root: string,
  opts: { maxEntries?: number; skip?: (rel: string) => boolean } = {},
): Promise<IntegritySnapshot> {
  const max = opts.maxEntries ?? MAX_ENTRIES;
  const out: IntegritySnapshot = new Map();
  const visit = async (rel: string) => {
    if (out.size >= max)
      throw new RepositoryIntegrityViolationError([{ path: rel || '.', change: 'added', fields: [] }]);
    const abs = rel ? path.join(root, rel) : root;
    const st = await lstat(abs).catch((err: NodeJS.ErrnoException) => {
      // An entry listed by readdir and gone before its lstat (another writer's lock file, ref or
      // worktree admin dir) is simply not in this snapshot; the root itself gone is an error.
      if (rel && err.code === 'ENOENT') return null;
      throw err;
    });
    if (!st) return;
    const type: EntryType = st.isFile()
      ? 'file'
      : st.isDirectory()
        ? 'dir'
        : st.isSymbolicLink()
          ? 'symlink'
          : 'other';
    let digest: string | null;
    let names: string[] = [];
    try {
      digest = type === 'file' ? await digestFile(abs) : type === 'symlink' ? await readlink(abs) : null;
      if (type === 'dir') names = (await readdir(abs)).sort();
    } catch (err) {
      if (rel && (err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    const entry: IntegrityEntry = {
      path: rel || '.',
      type,
      ino: st.ino,
      mode: st.mode,
      uid: st.uid,
      gid: st.gid,
      digest,
    };
    out.set(entry.path, entry);
    if (type !== 'dir') return;
    for (const name of names) {
      const child = rel ? `${rel}/${name}` : name;
      if (!opts.skip?.(child)) await visit(child);
    }
  };
  await visit('');
  return out;
}
