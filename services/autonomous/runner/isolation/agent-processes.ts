// Processes of the agent account (spec document 2, "Execution isolation rules": leftover agent
// processes are killed after every run). A CLI's tools can leave its process group (setsid, a daemon
// that double-forks), so the group kill of runner/cli-process.ts is not enough: every process whose
// real or effective uid is the agent's is found in /proc and SIGKILLed, repeatedly until none is
// left (a process forking while the scan runs is caught by the next round). Stopped processes die
// from SIGKILL too. The caller decides when no other run of the account is active (launcher.ts):
// another workflow's CLI under the same account must not be killed mid-run.
import { readdirSync, readFileSync } from 'node:fs';

/** Pids whose real or effective uid is `uid` (from /proc/<pid>/status `Uid:` line). */
export function processesOf(uid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let status: string;
    try {
      status = readFileSync(`/proc/${name}/status`, 'utf8');
    } catch {
      continue;
    }
    const line = status.split('\n').find((l) => l.startsWith('Uid:'));
    const ids = line?.slice(4).trim().split(/\s+/).map(Number) ?? [];
    if (ids.includes(uid)) out.push(Number(name));
  }
  return out;
}

/** The uid of a process (real), or null when it is gone. */
export function processUid(pid: number): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const line = status.split('\n').find((l) => l.startsWith('Uid:'));
    return line ? Number(line.slice(4).trim().split(/\s+/)[0]) : null;
  } catch {
    return null;
  }
}

/** SIGKILLs every process of the account; returns how many were signalled (0: none was running). */
export async function killAccountProcesses(uid: number, rounds = 20): Promise<number> {
  if (uid === 0 || uid === process.getuid?.())
    throw new Error('refusing to kill the processes of this account');
  return killRounds(() => processesOf(uid), rounds);
}

/** SIGKILLs what `select` lists, again and again (a dying parent may fork once more), until it lists none. */
async function killRounds(select: () => number[], rounds: number): Promise<number> {
  let killed = 0;
  for (let i = 0; i < rounds; i++) {
    const pids = select();
    if (!pids.length) return killed;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
        killed += 1;
      } catch {
        // gone already
      }
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return killed;
}

/** Process group and session of a process (/proc/<pid>/stat fields 5 and 6), or null when gone. */
function groupAndSession(pid: number): [number, number] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return [Number(f[2]), Number(f[3])];
  } catch {
    return null;
  }
}

/** SIGKILLs the account's processes in the CLI's process group or session (`leader`: the CLI's pid). */
export async function killRunProcesses(uid: number, leader: number, rounds = 10): Promise<number> {
  return killRounds(
    () =>
      processesOf(uid).filter((pid) => {
        const gs = groupAndSession(pid);
        return gs !== null && (gs[0] === leader || gs[1] === leader);
      }),
    rounds,
  );
}
