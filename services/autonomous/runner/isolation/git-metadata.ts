// Git metadata integrity around one agent run (spec document 2, "Errors" 4 and "Execution isolation
// rules": entry types, inode, mode, owner, content digest and ACL recorded before the run and compared
// after it; any change fails closed with exit code 68 and SVC_REPO_INTEGRITY_VIOLATION).
//
// Which metadata: read from the worktree BEFORE the run (the agent cannot redirect it afterwards):
//   - `<worktree>/.git` itself (its inode, type and content: a directory, or the `gitdir:` file of a
//     linked worktree): an agent that replaces it is caught;
//   - the git directory: `.git` of a plain clone, or for a linked worktree its admin directory
//     (`<common>/worktrees/<name>`) and the common directory (the bare repository of the local forge)
//     without the admin directories of OTHER worktrees (other workflows change those legitimately).
// The walk and digests are services/forge/integrity.ts; ACLs are read here in one `getfacl -R
// --skip-base` call per root (only entries with an extended ACL are printed) and stored on the entry,
// so an ACL added or changed by the agent is a changed entry.
//
// The launcher's own grants (read access where "other" lacks it, acl.ts) are applied BEFORE the first
// snapshot and revoked only after the comparison, so the launcher's ACL mask is in both snapshots and
// never trips the check; nothing else is excluded.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstatSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { inflateSync } from 'node:zlib';
import {
  compareSnapshots,
  type IntegritySnapshot,
  type IntegrityViolation,
} from '../../../../domain/forge/integrity.ts';
import { snapshotGitDir } from '../../../forge/integrity.ts';

const run = promisify(execFile);

export interface GitMetadataLocation {
  /** `<worktree>/.git` (may be absent: then its appearance is a change). */
  dotGit: string;
  /** Directories to snapshot, each with the subtrees to leave out (relative paths). */
  roots: { dir: string; skip: (rel: string) => boolean }[];
  /** The common directory a linked worktree shares with other worktrees (other workflows), if any. */
  shared?: string;
  /** The branch the worktree has checked out (`refs/heads/...`), read before the run. */
  ownRef?: string;
}

const never = () => false;

/** Where the worktree's Git metadata lives, read from `.git` and `commondir`. */
export function locateGitMetadata(worktree: string): GitMetadataLocation {
  const dotGit = path.join(worktree, '.git');
  const st = lstatSync(dotGit, { throwIfNoEntry: false });
  if (!st) return { dotGit, roots: [] };
  if (st.isDirectory()) return { dotGit, roots: [{ dir: dotGit, skip: never }] };
  if (!st.isFile()) return { dotGit, roots: [] };
  const text = readFileSync(dotGit, 'utf8');
  const line = text.split('\n').find((l) => l.startsWith('gitdir: '));
  if (!line) return { dotGit, roots: [] };
  const admin = path.resolve(worktree, line.slice('gitdir: '.length).trim());
  let common: string | null = null;
  try {
    common = path.resolve(admin, readFileSync(path.join(admin, 'commondir'), 'utf8').trim());
  } catch {
    common = null;
  }
  if (!common) return { dotGit, roots: [{ dir: admin, skip: never }] };
  const rel = path.relative(common, admin).split(path.sep).join('/');
  const own = rel.startsWith('worktrees/') ? rel : null;
  let ownRef: string | undefined;
  try {
    const head = readFileSync(path.join(admin, 'HEAD'), 'utf8').trim();
    if (head.startsWith('ref: refs/heads/')) ownRef = head.slice(5);
  } catch {
    ownRef = undefined;
  }
  return {
    dotGit,
    shared: common,
    ...(ownRef ? { ownRef } : {}),
    roots: [
      {
        dir: common,
        // Other worktrees' admin directories are theirs; ours is walked as part of the common dir.
        skip: (r) => r.startsWith('worktrees/') && r.split('/').length === 2 && r !== own,
      },
      ...(own ? [] : [{ dir: admin, skip: never }]),
    ],
  };
}

/** getfacl's octal escapes (`\\040`, `\\012`, `\\\\`) undone. */
function unescapeGetfacl(s: string): string {
  return s.replace(/\\(\d{3}|\\)/g, (_m, g: string) =>
    g === '\\' ? '\\' : String.fromCharCode(Number.parseInt(g, 8)),
  );
}

/**
 * Absolute path -> the extended ACL (entries joined by `,`) of every entry under `dirs` that has one.
 * One getfacl for all of a snapshot's roots: each is a process spawned from the worker's (large)
 * process, three times per CLI run.
 */
export async function extendedAcls(dirs: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let text: string;
  try {
    ({ stdout: text } = await run('getfacl', ['-R', '-P', '-s', '-p', '-n', '--', ...dirs], {
      maxBuffer: 64 * 1024 * 1024,
      // Untranslated messages: a vanished entry is recognised by its text below.
      env: { ...process.env, LC_ALL: 'C' },
    }));
  } catch (err) {
    // No getfacl on this host (the `acl` package): ACLs are not compared (isolation needs it anyway).
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return out;
    // getfacl exits 1 when a file vanished mid-walk (another workflow's worktree admin dir, lock
    // file or ref in the shared bare repository) but still prints the rest, which may be nothing at
    // all when no entry has an extended ACL. Any other complaint is an error.
    const { stdout = '', stderr = '' } = err as { stdout?: string; stderr?: string };
    const complaints = stderr.split('\n').filter(Boolean);
    if (!complaints.length || !complaints.every((l) => l.endsWith(': No such file or directory'))) throw err;
    text = stdout;
  }
  for (const block of text.split('\n\n')) {
    const lines = block.split('\n').filter(Boolean);
    const head = lines.find((l) => l.startsWith('# file: '));
    if (!head) continue;
    const acl = lines.filter((l) => !l.startsWith('#')).join(',');
    out.set(path.resolve(unescapeGetfacl(head.slice('# file: '.length))), acl);
  }
  return out;
}

export type MetadataSnapshot = IntegritySnapshot;

async function snapshotRoot(
  root: { dir: string; skip: (rel: string) => boolean },
  aclsOf: Promise<Map<string, string>>,
): Promise<IntegritySnapshot> {
  const [entries, acls] = await Promise.all([snapshotGitDir(root.dir, { skip: root.skip }), aclsOf]);
  const out: IntegritySnapshot = new Map();
  for (const [rel, e] of entries)
    out.set(`${root.dir}:${rel}`, {
      ...e,
      path: `${root.dir}:${rel}`,
      acl: acls.get(path.resolve(root.dir, rel)) ?? null,
    });
  return out;
}

/** Snapshot of the worktree's Git metadata (`.git` itself and every root), keyed by `<root>:<rel>`. */
export async function snapshotMetadata(loc: GitMetadataLocation): Promise<MetadataSnapshot> {
  const out: MetadataSnapshot = new Map();
  const st = lstatSync(loc.dotGit, { throwIfNoEntry: false });
  // A `.git` directory that is itself a root is walked (its own entry included) below.
  const ownDotGit = st && !loc.roots.some((r) => r.dir === loc.dotGit);
  const acls = extendedAcls([...(ownDotGit ? [loc.dotGit] : []), ...loc.roots.map((r) => r.dir)]);
  // Settled even if a walk below fails first (its rejection would otherwise be unhandled).
  acls.catch(() => undefined);
  if (ownDotGit) {
    const dotGit = await snapshotRoot({ dir: loc.dotGit, skip: (rel) => rel.length > 0 }, acls);
    for (const [k, v] of dotGit) out.set(k, v);
  }
  for (const root of loc.roots) for (const [k, v] of await snapshotRoot(root, acls)) out.set(k, v);
  return out;
}

/** Whether a loose object file holds exactly the object its path names (a content-addressed object). */
export function isValidLooseObject(file: string, name: string): boolean {
  try {
    const raw = inflateSync(readFileSync(file));
    const algo = name.length === 64 ? 'sha256' : name.length === 40 ? 'sha1' : null;
    return algo !== null && createHash(algo).update(raw).digest('hex') === name;
  } catch {
    return false;
  }
}

const LOOSE_OBJECT = /^objects\/([0-9a-f]{2})\/([0-9a-f]{38}|[0-9a-f]{62})$/;

/**
 * Every change between two metadata snapshots, the ACL included.
 *
 * The common directory of a linked worktree (the local forge's bare repository) is shared with other
 * workflows and written during the run by their orchestrators and by merges and pushes to the base
 * branch. Only what such writers do is tolerated there, and only where it cannot change what this
 * run's orchestrator will commit and push:
 *   - refs and reflogs of OTHER branches (our branch, read from the admin dir's HEAD before the run,
 *     stays strict), and the directories above them;
 *   - added loose objects whose content hashes to their name (a valid object is harmless; a planted
 *     one that does not verify is a violation);
 *   - when the run is isolated (`agentUid`: the account cannot write there), any other change under
 *     `objects/` (packs, pruning) and FETCH_HEAD / ORIG_HEAD, unless the entry is owned by the agent
 *     account (then its permissions failed: a violation).
 * Everything else (config, hooks, info, packed-refs, our branch, the worktree's admin dir, `.git`)
 * stays strict, and a plain `.git` directory is strict throughout.
 */
export function compareMetadata(
  before: MetadataSnapshot,
  after: MetadataSnapshot,
  opts: { loc?: GitMetadataLocation; agentUid?: number } = {},
): IntegrityViolation[] {
  const found = compareSnapshots(before, after);
  const shared = opts.loc?.shared;
  if (!shared) return found;
  const ownRef = opts.loc?.ownRef;
  const prefix = `${shared}:`;
  const isolated = opts.agentUid !== undefined;
  return found.filter((v) => {
    if (!v.path.startsWith(prefix)) return true;
    const rel = v.path.slice(prefix.length);
    const entry = after.get(v.path) ?? before.get(v.path);
    if (!entry || (isolated && entry.uid === opts.agentUid)) return true;
    if (entry.type === 'dir' && ['refs', 'refs/heads', 'logs', 'logs/refs', 'logs/refs/heads'].includes(rel))
      return false;
    for (const base of ['refs/heads', 'logs/refs/heads']) {
      if (!rel.startsWith(`${base}/`)) continue;
      const ref = `refs/heads/${rel.slice(base.length + 1)}`;
      // Our branch, and the directories leading to it, stay strict.
      return Boolean(ownRef && (ref === ownRef || ownRef.startsWith(`${ref}/`)));
    }
    const loose = LOOSE_OBJECT.exec(rel);
    if (loose && v.change === 'added' && entry.type === 'file')
      return !isValidLooseObject(path.join(shared, rel), `${loose[1]}${loose[2]}`);
    if (/^objects\/[0-9a-f]{2}$/.test(rel) && v.change === 'added' && entry.type === 'dir') return false;
    if (isolated && (rel.startsWith('objects/') || rel === 'FETCH_HEAD' || rel === 'ORIG_HEAD')) return false;
    return true;
  });
}

/** The Git metadata directories of a worktree, for the sandbox's read-only binds (a plain path list). */
export function gitMetadataRoots(worktree: string): string[] {
  try {
    return locateGitMetadata(worktree).roots.map((r) => r.dir);
  } catch {
    return [];
  }
}
