// A ref's object id read from a bare repository's own ref files, without starting git.
//
// Why: the local forge reads branch tips on every pull-request refresh (head, base, mergeability,
// checks), and an autonomous workflow polls its pull request until CI ends. Each `git rev-parse` was a
// process spawned from the API or worker process, a few milliseconds of CPU each, and one workflow
// test file spawned ~400 of them. The files are read the way git's "files" ref backend stores them
// (gitrepository-layout(5)): a loose ref is `<git dir>/<ref>` holding the object id; a packed one is
// a `<id> <ref>` line of `<git dir>/packed-refs`, and git writes a loose ref over a packed one, so the
// loose file is read first (as git does). Anything else (a symbolic ref, an unexpected file, another
// ref backend such as reftable, whose `refs/heads` is a file) is left to git.
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { isObjectId } from '../../domain/forge/branch-name.ts';

/** A loose ref or HEAD is one line; anything longer is not a plain ref. */
const LOOSE_MAX_BYTES = 1024;
/** packed-refs past this is left to git (a worktree's agent can write into the common directory). */
const PACKED_MAX_BYTES = 16 * 1024 * 1024;

/**
 * The text of a regular file of at most `max` bytes; throws otherwise. Opened without blocking: a FIFO
 * an agent put in the ref directory must not hold this process's thread (it is refused by its type).
 */
function readBounded(file: string, max: number): string {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > max) throw new Error(`${file}: not a plain ref file`);
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * The object id `ref` (a full name such as `refs/heads/main`, already validated by the caller) names:
 * a string; `null` when the repository has no such ref; `undefined` when only git can say.
 */
export function readRefFile(gitDir: string, ref: string): string | null | undefined {
  let loose: string | undefined;
  try {
    loose = readBounded(path.join(gitDir, ref), LOOSE_MAX_BYTES);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return undefined;
  }
  if (loose !== undefined) {
    const id = loose.trim();
    return isObjectId(id) ? id : undefined;
  }
  let packed: string;
  try {
    packed = readBounded(path.join(gitDir, 'packed-refs'), PACKED_MAX_BYTES);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? null : undefined;
  }
  for (const line of packed.split('\n')) {
    // `# pack-refs with: ...` is the header; `^<id>` lines carry the peeled object of an annotated tag.
    if (line.startsWith('#') || line.startsWith('^')) continue;
    const space = line.indexOf(' ');
    if (space > 0 && line.slice(space + 1) === ref) {
      const id = line.slice(0, space);
      return isObjectId(id) ? id : undefined;
    }
  }
  return null;
}

/**
 * The branch `HEAD` names (`ref: refs/heads/<branch>` in `<git dir>/HEAD`), as `git symbolic-ref
 * --short HEAD` prints it; `undefined` when only git can say (a detached or unreadable HEAD, another
 * ref backend, a name outside the plain set below).
 */
export function readHeadBranch(gitDir: string): string | undefined {
  let head: string;
  try {
    head = readBounded(path.join(gitDir, 'HEAD'), LOOSE_MAX_BYTES);
  } catch {
    return undefined;
  }
  const match = /^ref: refs\/heads\/([A-Za-z0-9._/-]{1,200})\n?$/.exec(head);
  // reftable repositories keep `ref: refs/heads/.invalid` there for older gits.
  return match && match[1] !== '.invalid' ? match[1] : undefined;
}
