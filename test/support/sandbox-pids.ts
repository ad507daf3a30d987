// Host pids of sandboxed processes. A process in the sandbox (agent/sandbox/) has its own pid
// namespace, so the pid it reports ($$, process.pid) is small and means nothing on the host; its host
// pid is found through /proc's NSpid lines (last field: the pid inside) among processes working in
// `cwd`.
import { readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export async function hostPidOf(
  inner: number,
  cwd: string,
  /** The program's name (first argument's base name): another sandbox may use the same small pid. */
  program?: string,
  timeoutMs = 60_000,
): Promise<number> {
  const where = realpathSync(cwd);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      try {
        const nspid = readFileSync(`/proc/${name}/status`, 'utf8')
          .split('\n')
          .find((l) => l.startsWith('NSpid:'))
          ?.slice(6)
          .trim()
          .split(/\s+/)
          .map(Number);
        if (!nspid || nspid.length < 2 || nspid[nspid.length - 1] !== inner) continue;
        if (readlinkSync(`/proc/${name}/cwd`) !== where) continue;
        const argv0 = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0')[0] ?? '';
        if (program === undefined || argv0.split('/').pop() === program) return Number(name);
      } catch {
        // gone meanwhile
      }
    }
    if (Date.now() > deadline)
      throw new Error(`no process with pid ${inner} in a namespace working in ${cwd}`);
    await sleep(25);
  }
}
