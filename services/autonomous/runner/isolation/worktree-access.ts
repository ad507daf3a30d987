// Write access of the agent account to the working tree, and only to it (spec document 2, "Execution
// isolation rules"). Before the run every entry of the worktree gets `user:<agent>:rwX`, except:
//   - `.git` (a directory of a plain clone, or the `gitdir:` file of a linked worktree) and all under
//     it: Git metadata is read-only for the agent; the integrity check watches it;
//   - symlinks (an ACL would land on the target) and regular files with more than one link (a hard
//     link to a file outside the tree must not become writable through it).
// After the run the entries the grant added lose it again, every entry the agent created is given back
// to the service account (`chown --from`: a later run of another workflow under the same account
// owns nothing here), and what the agent created itself needs no revoke (it is the service's now,
// with the agent's entry never set).
import { execFile } from 'node:child_process';
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { grantWrite, revokeWrite } from './acl.ts';

const run = promisify(execFile);

/** Every entry of the tree the agent may be given write access to (the root included). */
export async function writableEntries(worktree: string, max = 200_000): Promise<string[]> {
  const out: string[] = [];
  const visit = async (dir: string) => {
    out.push(dir);
    for (const name of await readdir(dir)) {
      if (dir === worktree && name === '.git') continue;
      const abs = path.join(dir, name);
      const st = await lstat(abs);
      if (st.isSymbolicLink()) continue;
      if (st.isDirectory()) await visit(abs);
      else if (st.isFile() && st.nlink === 1) out.push(abs);
      if (out.length > max) throw new Error(`the worktree holds more than ${max} entries`);
    }
  };
  await visit(worktree);
  return out;
}

export interface WorktreeGrant {
  revoke(): Promise<void>;
}

export async function grantWorktree(
  uid: number,
  worktree: string,
  service: { uid: number; gid: number },
): Promise<WorktreeGrant> {
  const entries = await writableEntries(worktree);
  try {
    await grantWrite(uid, entries);
  } catch (err) {
    await revokeWrite(uid, entries);
    throw err;
  }
  return {
    async revoke() {
      // What was granted, and what is there now (a granted file the agent renamed keeps its entry).
      const now = await writableEntries(worktree).catch(() => []);
      await revokeWrite(uid, [...new Set([...entries, ...now])]);
      // Entries the agent created belong to the service account from now on (-h: links themselves).
      await run('chown', [
        '-R',
        '-h',
        `--from=${uid}`,
        `${service.uid}:${service.gid}`,
        '--',
        worktree,
      ]).catch(() => undefined);
    },
  };
}
