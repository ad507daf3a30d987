// Which runs of the agent account are active on this host, across every worker process sharing it
// (spec document 2, "Execution isolation rules": leftover agent processes are killed after every run).
// Killing every process of the account is only safe when no other run of it is under way, in this
// process or another: each run holds a marker file `<service pid>-<run id>` in a root-only directory
// (`<tmp>/svc-agent-runs-<uid>`, 0700) from before its CLI starts until after its leftovers are killed.
// Markers of dead service processes are stale and removed. The check-and-kill and the marker's
// creation happen under one lock (an atomic mkdir; a lock older than 30 s is a dead holder's and is
// broken), so a run whose CLI is about to start is always seen by a concurrent kill-all.
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const STALE_LOCK_MS = 30_000;

export function runsDir(uid: number): string {
  return path.join(os.tmpdir(), `svc-agent-runs-${uid}`);
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

async function withLock<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const lock = path.join(dir, '.lock');
  for (let i = 0; ; i++) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const st = statSync(lock, { throwIfNoEntry: false });
      if (st && Date.now() - st.mtimeMs > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true });
      if (i > 3000) throw new Error(`the agent run lock ${lock} is held for too long`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Live markers other than `self` (stale ones are removed). */
function others(dir: string, self: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === self || name.startsWith('.')) continue;
    const pid = Number(name.split('-')[0]);
    if (Number.isSafeInteger(pid) && pid > 0 && alive(pid)) out.push(name);
    else rmSync(path.join(dir, name), { force: true });
  }
  return out;
}

export interface AccountRun {
  /** Runs `kill` (every process of the account) only when no other run is active, under the lock. */
  killAllIfAlone(kill: () => Promise<number>): Promise<number>;
  end(): void;
}

export async function beginAccountRun(uid: number, runId: string): Promise<AccountRun> {
  const dir = runsDir(uid);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const self = `${process.pid}-${runId}`;
  await withLock(dir, async () => {
    writeFileSync(path.join(dir, self), '', { mode: 0o600 });
  });
  return {
    killAllIfAlone: (kill) => withLock(dir, async () => (others(dir, self).length ? 0 : kill())),
    end() {
      rmSync(path.join(dir, self), { force: true });
    },
  };
}
