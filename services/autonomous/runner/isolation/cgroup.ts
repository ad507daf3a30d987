// Per-task cgroup v2 limits of the agent CLI (spec document 2, "Limits": memory 2 GiB (2147483648
// bytes), 512 processes, 2 CPU cores, wall clock 3600 s; switch `autonomous.agent_task_cgroup_enabled`
// = on | auto | off).
//
// Availability: a cgroup2 mount (from /proc/self/mountinfo) whose root offers the memory, pids and cpu
// controllers and is writable by this process. A v1 or hybrid host whose v2 hierarchy has none of those
// controllers (controllers are bound to v1) is NOT available: `auto` then runs without, `on` refuses
// the step with the reason. Layout: `<mount>/svc-agent/<task>`; the controllers are enabled in the
// mount root's and `svc-agent`'s cgroup.subtree_control (v2's no-internal-processes rule: `svc-agent`
// holds no process itself). The CLI is moved into its task cgroup right after spawn (the runner writes
// the pid to cgroup.procs before the CLI's first line is read; a CLI forks no tool before it has read
// its prompt); after the run everything in it is killed (cgroup.kill, else SIGKILL per pid) and the
// cgroup removed. Wall clock: the task cgroup is killed when 3600 s have passed since the start,
// paused time included (the runner's own task timeout counts running time only).
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  readFileSync,
  rmdirSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';

export const TASK_LIMITS = {
  memoryMaxBytes: 2_147_483_648,
  pidsMax: 512,
  /** cpu.max: quota and period in microseconds, 2 CPUs. */
  cpuMax: '200000 100000',
  wallClockSeconds: 3600,
} as const;

const CONTROLLERS = ['memory', 'pids', 'cpu'] as const;
const PARENT = 'svc-agent';

export type CgroupAvailability = { ok: true; mount: string } | { ok: false; reason: string };

/** The first cgroup2 mount point, from mountinfo text. */
export function cgroup2Mount(mountinfo: string): string | null {
  for (const line of mountinfo.split('\n')) {
    const sep = line.indexOf(' - ');
    if (sep === -1) continue;
    if (line.slice(sep + 3).split(' ')[0] === 'cgroup2') return line.split(' ')[4] ?? null;
  }
  return null;
}

export function cgroupAvailability(mountinfoPath = '/proc/self/mountinfo'): CgroupAvailability {
  let mount: string | null = null;
  try {
    mount = cgroup2Mount(readFileSync(mountinfoPath, 'utf8'));
  } catch {
    mount = null;
  }
  if (!mount) return { ok: false, reason: 'no cgroup v2 hierarchy is mounted' };
  let controllers: string[] = [];
  try {
    controllers = readFileSync(path.join(mount, 'cgroup.controllers'), 'utf8').trim().split(/\s+/);
  } catch {
    return { ok: false, reason: `${mount}/cgroup.controllers cannot be read` };
  }
  const missing = CONTROLLERS.filter((c) => !controllers.includes(c));
  if (missing.length)
    return {
      ok: false,
      reason: `the cgroup v2 hierarchy at ${mount} lacks the ${missing.join(', ')} controller(s) (offered: ${controllers.join(' ') || 'none'}; a v1/hybrid host binds them to v1)`,
    };
  try {
    accessSync(path.join(mount, 'cgroup.subtree_control'), constants.W_OK);
    accessSync(mount, constants.W_OK);
  } catch {
    return { ok: false, reason: `the cgroup v2 hierarchy at ${mount} is not writable by this process` };
  }
  return { ok: true, mount };
}

export interface TaskCgroup {
  dir: string;
  /** Moves a process into the task's cgroup. */
  add(pid: number): void;
  /** Kills everything in it and removes it. */
  close(): Promise<void>;
}

const enable = (dir: string) =>
  writeFileSync(path.join(dir, 'cgroup.subtree_control'), CONTROLLERS.map((c) => `+${c}`).join(' '));

/** Creates `<mount>/svc-agent/<name>` with the task limits. */
export function createTaskCgroup(mount: string, name: string, onWallClock: () => void): TaskCgroup {
  const parent = path.join(mount, PARENT);
  enable(mount);
  mkdirSync(parent, { recursive: true });
  enable(parent);
  const dir = path.join(parent, name.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 200));
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'memory.max'), String(TASK_LIMITS.memoryMaxBytes));
  writeFileSync(path.join(dir, 'pids.max'), String(TASK_LIMITS.pidsMax));
  writeFileSync(path.join(dir, 'cpu.max'), TASK_LIMITS.cpuMax);
  const kill = () => {
    if (existsSync(path.join(dir, 'cgroup.kill'))) {
      writeFileSync(path.join(dir, 'cgroup.kill'), '1');
      return;
    }
    for (const pid of readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // gone
      }
    }
  };
  const wall = setTimeout(() => {
    onWallClock();
    kill();
  }, TASK_LIMITS.wallClockSeconds * 1000);
  wall.unref();
  return {
    dir,
    add(pid) {
      writeFileSync(path.join(dir, 'cgroup.procs'), String(pid));
    },
    async close() {
      clearTimeout(wall);
      for (let i = 0; i < 50; i++) {
        try {
          kill();
        } catch {
          // already empty or removed
        }
        try {
          rmdirSync(dir);
          return;
        } catch {
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    },
  };
}
