// `go install` of pinned Go programs (the Temporal CLI, the Temporal server) into a cache directory, with
// a progress line at an interval: cold builds take minutes and CI must show it is not hung.
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';

export function executable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export async function goInstall(opts: {
  /** What is built, for the log lines ("the Temporal CLI"). */
  what: string;
  packages: string[];
  gobin: string;
  /** GOFLAGS unless the environment sets them. */
  goflags: string;
  progressEveryMs: number;
  log: (line: string) => void;
}): Promise<void> {
  const started = Date.now();
  const child = spawn('go', ['install', '-v', ...opts.packages], {
    env: { ...process.env, GOBIN: opts.gobin, GOFLAGS: process.env.GOFLAGS ?? opts.goflags },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let packages = 0;
  const timer = setInterval(
    () =>
      opts.log(
        `  still building... ${Math.round((Date.now() - started) / 1000)} s, ${packages} packages compiled`,
      ),
    opts.progressEveryMs,
  );
  const tail: string[] = [];
  const onLine = (buf: Buffer) => {
    for (const line of buf.toString().split('\n')) {
      if (!line) continue;
      packages++;
      tail.push(line);
      if (tail.length > 20) tail.shift();
    }
  };
  child.stdout.on('data', onLine);
  child.stderr.on('data', onLine);
  const code: number = await new Promise((resolve) => child.on('close', (c) => resolve(c ?? 1)));
  clearInterval(timer);
  if (code !== 0) throw new Error(`go install of ${opts.what} failed (exit ${code}):\n${tail.join('\n')}`);
  opts.log(`${opts.what} built in ${Math.round((Date.now() - started) / 1000)} s`);
}
