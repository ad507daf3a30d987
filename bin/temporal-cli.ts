// Finds the `temporal` CLI: TEMPORAL_CLI_PATH, then PATH, then a per-user cache copy (built there with
// `go install` when Go is present: later CLI versions carry a replace directive and cannot be
// `go install`ed, so the version is pinned). (The SDK download is not used: it needs the internet and hides the binary path.)
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { executable, goInstall } from './go-install.ts';

export const TEMPORAL_CLI_VERSION = 'v1.5.1';

export function cacheDir(): string {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'svc', `temporal-${TEMPORAL_CLI_VERSION}`);
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const p = path.join(dir, name);
    if (dir && executable(p)) return p;
  }
  return undefined;
}

async function buildWithGo(dir: string, log: (line: string) => void): Promise<string> {
  mkdirSync(dir, { recursive: true });
  log(
    `Building the Temporal CLI ${TEMPORAL_CLI_VERSION} with Go into ${dir} (first run only; this takes a few minutes)...`,
  );
  await goInstall({
    what: 'the Temporal CLI',
    packages: [`github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_VERSION}`],
    gobin: dir,
    goflags: '-mod=mod',
    progressEveryMs: 15_000,
    log,
  });
  const bin = path.join(dir, 'temporal');
  if (!executable(bin)) throw new Error(`go install of the Temporal CLI left no executable at ${bin}`);
  return bin;
}

export async function findTemporalCli(
  opts: { explicit?: string; log?: (line: string) => void } = {},
): Promise<string> {
  const log = opts.log ?? ((l: string) => console.log(l));
  if (opts.explicit) {
    if (!executable(opts.explicit))
      throw new Error(`TEMPORAL_CLI_PATH=${opts.explicit} is not an executable file`);
    return opts.explicit;
  }
  const fromPath = onPath('temporal');
  if (fromPath) return fromPath;
  const cached = path.join(cacheDir(), 'temporal');
  if (executable(cached)) return cached;
  if (spawnSync('go', ['version'], { stdio: 'ignore' }).status === 0) return buildWithGo(cacheDir(), log);
  throw new Error(
    'No Temporal CLI found: set TEMPORAL_CLI_PATH, put `temporal` on PATH, or install Go so it can be built ' +
      `(GOBIN=${cacheDir()} go install github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_VERSION}).`,
  );
}
