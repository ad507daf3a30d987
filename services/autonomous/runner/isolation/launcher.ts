// One isolated (or not) agent CLI run, around the spawn of runner/cli-process.ts (spec document 2,
// "Execution isolation rules" and "Errors" 4). The order matters:
//   prepare   1. the Git metadata location is read from the worktree (before the agent can touch it);
//             2. isolated: the run is registered (account-runs.ts) and leftovers of the account are
//                killed when no other run of it is active on this host;
//                the traverse/deny/target ACLs (access-plan.ts) and the write grant on the working
//                tree (worktree-access.ts) are applied; the CLI must be executable by the account
//                (checked by running `test -x` as it: a clear refusal, not an EACCES from spawn);
//             3. the metadata roots are marked watched and snapshotted WITH the launcher's grants in
//                place, so its own ACL mask is in the "before" state and cannot trip the check;
//             4. cgroup v2 task limits when decided (cgroup.ts).
//   spawn     as the account's uid/gid (libuv drops supplementary groups), empty environment
//             (agent-env.ts), the task cgroup joined right after spawn.
//   finish    1. the run's processes (its group and session) are killed, and every process of the
//                account when no other run of it is active on this host (account-runs.ts: a daemon
//                that left the session is only caught then, or by the task cgroup), the cgroup closed;
//             2. the metadata is snapshotted again and compared: any difference is the run's
//                integrity violation (exit 68, SVC_REPO_INTEGRITY_VIOLATION; fail closed upstream);
//             3. the grants are revoked (shared entries stay while another run holds them), the
//                agent's new files handed to the service account, the roots unwatched.
// Without isolation (off, or auto without account or root) only the snapshot/compare part runs.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { realpathSync, statSync } from 'node:fs';
import { RepositoryIntegrityViolationError } from '../../../../domain/forge/integrity.ts';
import { planAccess } from './access-plan.ts';
import { type AccountRun, beginAccountRun } from './account-runs.ts';
import { holdPaths, releaseHolder, unwatchPaths, watchPaths } from './acl.ts';
import type { AgentAccount } from './agent-account.ts';
import { killAccountProcesses, killRunProcesses } from './agent-processes.ts';
import { createTaskCgroup, type TaskCgroup } from './cgroup.ts';
import type { IsolationDecision } from './decide.ts';
import { compareMetadata, locateGitMetadata, snapshotMetadata } from './git-metadata.ts';
import { grantWorktree, type WorktreeGrant } from './worktree-access.ts';

export interface PreparedRun {
  /** Spawn options: uid/gid when isolated. */
  uid?: number;
  gid?: number;
  onSpawn(pid: number): void;
  /** After the CLI's end: the integrity verdict (null: unchanged). Always call exactly once. */
  finish(): Promise<{ violation: RepositoryIntegrityViolationError | null; leftoversKilled: number }>;
}

export class IsolationRefusedError extends Error {}

type Snapshot = Awaited<ReturnType<typeof snapshotMetadata>>;

/** The comparison after the run; metadata that can no longer be walked (removed, replaced) is a violation. */
async function verdict(
  before: Snapshot,
  loc: ReturnType<typeof locateGitMetadata>,
  agentUid?: number,
): Promise<RepositoryIntegrityViolationError | null> {
  let after: Snapshot;
  try {
    after = await snapshotMetadata(loc);
  } catch (err) {
    if (err instanceof RepositoryIntegrityViolationError) return err;
    return new RepositoryIntegrityViolationError([
      {
        path: `${loc.dotGit} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`,
        change: 'removed',
        fields: [],
      },
    ]);
  }
  const violations = compareMetadata(before, after, { loc, ...(agentUid === undefined ? {} : { agentUid }) });
  return violations.length ? new RepositoryIntegrityViolationError(violations) : null;
}

function groupIds(account: AgentAccount): number[] {
  try {
    return execFileSync('id', ['-G', account.name], { encoding: 'utf8' }).trim().split(/\s+/).map(Number);
  } catch {
    return [account.gid];
  }
}

export async function prepareRun(opts: {
  decision: Exclude<IsolationDecision, { kind: 'refused' }>;
  worktree: string;
  home: string;
  executable: string | null;
  label: string;
  onWallClock?: () => void;
}): Promise<PreparedRun> {
  const loc = locateGitMetadata(opts.worktree);
  const roots = loc.roots.map((r) => r.dir);
  if (opts.decision.kind !== 'isolated') {
    const before = await snapshotMetadata(loc);
    return {
      onSpawn: () => undefined,
      async finish() {
        return { violation: await verdict(before, loc), leftoversKilled: 0 };
      },
    };
  }
  const { account, cgroupMount } = opts.decision;
  const service = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
  const holder = randomUUID();
  let accountRun: AccountRun | null = null;
  let leader: number | null = null;
  let grant: WorktreeGrant | null = null;
  let watching = false;
  let cgroup: TaskCgroup | null = null;
  const undo = async () => {
    await cgroup?.close().catch(() => undefined);
    if (watching) await unwatchPaths(roots);
    await grant?.revoke().catch(() => undefined);
    await releaseHolder(holder);
    accountRun?.end();
  };
  try {
    // Leftovers of an earlier run (a worker that died mid-run) go first, when no other run is active.
    accountRun = await beginAccountRun(account.uid, holder);
    const run = accountRun;
    await run.killAllIfAlone(() => killAccountProcesses(account.uid));
    const worktree = realpathSync(opts.worktree);
    const targets = [
      { path: worktree, perms: 'rwx' as const },
      { path: realpathSync(opts.home), perms: null },
      ...roots.map((r) => ({ path: realpathSync(r), perms: 'r-x' as const })),
    ];
    const ids = { uid: account.uid, gids: groupIds(account) };
    await holdPaths(account.uid, holder, planAccess(ids, targets));
    grant = await grantWorktree(account.uid, worktree, service);
    if (opts.executable) {
      const probe = spawnSync('/usr/bin/test', ['-x', opts.executable], {
        uid: account.uid,
        gid: account.gid,
        env: {},
        stdio: 'ignore',
      });
      if (probe.status !== 0)
        throw new IsolationRefusedError(
          `the CLI could not be started: ${opts.executable} is not executable by the agent account ${account.name} (check the permissions of the file and of every directory above it)`,
        );
    }
    await watchPaths(roots);
    watching = true;
    const before = await snapshotMetadata(loc);
    if (cgroupMount)
      cgroup = createTaskCgroup(
        cgroupMount,
        `${opts.label}-${holder}`,
        opts.onWallClock ?? (() => undefined),
      );
    return {
      uid: account.uid,
      gid: account.gid,
      onSpawn(pid) {
        leader = pid;
        try {
          cgroup?.add(pid);
        } catch {
          // The process is gone already.
        }
      },
      async finish() {
        let leftoversKilled = 0;
        try {
          await cgroup?.close();
          cgroup = null;
          // The run's own (its group and session), then every process of the account if no other run is on.
          if (leader !== null) leftoversKilled += await killRunProcesses(account.uid, leader);
          leftoversKilled += await run.killAllIfAlone(() => killAccountProcesses(account.uid));
          return { violation: await verdict(before, loc, account.uid), leftoversKilled };
        } finally {
          await undo();
        }
      },
    };
  } catch (err) {
    await undo();
    throw err;
  }
}

/** Owner uids of the worktree (the project owner's side of the account rules). */
export function worktreeOwner(worktree: string): number[] {
  const st = statSync(worktree, { throwIfNoEntry: false });
  return st ? [st.uid] : [];
}
