// Leftover CLI processes of a line (spec "Limits": leftover agent processes are killed after every
// run). The runner kills the whole process group when a run ends; what this file covers is a worker
// that died mid-run (kill -9, a crash, a lost machine restarted): its CLI runs on, detached, in its own
// group. The runner records the group of every CLI it starts in the line's CLI home
// (`.svc-runner-pgid`: pgid and the leader's start time from /proc/<pid>/stat) and, before the line's
// next run on a worker sharing that data dir, kills a group whose leader is still the same process
// (same start time: a recycled pid is left alone). Its proxy token is revoked anyway (the next run
// rotates the line's tokens), so a survivor could not spend quota; this stops it editing the worktree.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const FILE = '.svc-runner-pgid';

/** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot), or null when gone. */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

/** The real uid of a process, or null when it is gone. */
function processUid(pid: number): number | null {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Uid:'));
    return line ? Number(line.slice(4).trim().split(/\s+/)[0]) : null;
  } catch {
    return null;
  }
}

export function recordGroup(home: string, pid: number): void {
  const start = processStartTime(pid);
  if (start === null) return;
  writeFileSync(path.join(home, FILE), `${pid} ${start}\n`, { mode: 0o600 });
}

export function forgetGroup(home: string): void {
  rmSync(path.join(home, FILE), { force: true });
}

/**
 * Kills the line's recorded group if its leader is still the process that was recorded (and, with
 * `onlyUid`, runs as that account: a record the agent could have forged never points the runner at
 * another account's process).
 */
export function killLeftoverGroup(home: string, onlyUid?: number): boolean {
  let text: string;
  try {
    text = readFileSync(path.join(home, FILE), 'utf8');
  } catch {
    return false;
  }
  forgetGroup(home);
  const [pidText, start] = text.trim().split(' ');
  const pid = Number(pidText);
  if (!Number.isSafeInteger(pid) || pid <= 1 || !start) return false;
  if (processStartTime(pid) !== start) return false;
  if (onlyUid !== undefined && processUid(pid) !== onlyUid) return false;
  try {
    process.kill(-pid, 'SIGCONT');
    process.kill(-pid, 'SIGKILL');
    return true;
  } catch {
    return false;
  }
}
