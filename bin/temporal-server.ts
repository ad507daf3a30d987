// The real Temporal server (`go.temporal.io/server`) and its `temporal-sql-tool`, for the production
// topology test and for operators who follow examples/deploy: built with `go install` from the Go module
// proxy into a per-user cache keyed by version (the cold build takes about 11 minutes, so it is done once,
// ahead of the tests: `npm run temporal:install-server`).
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const TEMPORAL_SERVER_VERSION = 'v1.32.1';
const MODULE = 'go.temporal.io/server';
// go install names a binary after its package directory; the cache uses the release names.
const BINARIES = [
  { pkg: 'cmd/server', built: 'server', name: 'temporal-server' },
  { pkg: 'cmd/tools/sql', built: 'sql', name: 'temporal-sql-tool' },
] as const;

export interface TemporalServerBinaries {
  server: string;
  sqlTool: string;
}

export function serverCacheDir(): string {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'svc', `temporal-server-${TEMPORAL_SERVER_VERSION}`);
}

export function serverBinaries(dir = serverCacheDir()): TemporalServerBinaries {
  return { server: path.join(dir, 'temporal-server'), sqlTool: path.join(dir, 'temporal-sql-tool') };
}

function executable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The cached binaries, or undefined when either is missing. */
export function findTemporalServer(dir = serverCacheDir()): TemporalServerBinaries | undefined {
  const bins = serverBinaries(dir);
  return executable(bins.server) && executable(bins.sqlTool) ? bins : undefined;
}

/** The PostgreSQL schema directories that ship in the server's Go module (downloaded by the build). */
export function postgresSchemaDirs(): { temporal: string; visibility: string } {
  const modCache =
    spawnSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8' }).stdout?.trim() ||
    path.join(os.homedir(), 'go', 'pkg', 'mod');
  const root = path.join(modCache, `${MODULE}@${TEMPORAL_SERVER_VERSION}`, 'schema', 'postgresql', 'v12');
  return {
    temporal: path.join(root, 'temporal', 'versioned'),
    visibility: path.join(root, 'visibility', 'versioned'),
  };
}

/** Builds both binaries unless they are cached; returns their paths. */
export async function installTemporalServer(
  log: (line: string) => void = (l) => console.log(l),
): Promise<TemporalServerBinaries> {
  const dir = serverCacheDir();
  const found = findTemporalServer(dir);
  if (found) {
    log(`Temporal server ${TEMPORAL_SERVER_VERSION} already built: ${dir}`);
    return found;
  }
  if (spawnSync('go', ['version'], { stdio: 'ignore' }).status !== 0)
    throw new Error(`Go is needed to build the Temporal server ${TEMPORAL_SERVER_VERSION} (go install).`);
  mkdirSync(path.dirname(dir), { recursive: true });
  // Built into a staging directory and moved into place at the end, so that an interrupted build never
  // leaves a half-filled cache directory that looks complete.
  const staging = mkdtempSync(`${dir}.building-`);
  log(
    `Building the Temporal server ${TEMPORAL_SERVER_VERSION} and temporal-sql-tool with Go into ${dir} ` +
      '(first run only; about 11 minutes cold)...',
  );
  const started = Date.now();
  const child = spawn(
    'go',
    ['install', '-v', ...BINARIES.map((b) => `${MODULE}/${b.pkg}@${TEMPORAL_SERVER_VERSION}`)],
    {
      env: { ...process.env, GOBIN: staging, GOFLAGS: process.env.GOFLAGS ?? '-buildvcs=false' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let packages = 0;
  const timer = setInterval(
    () =>
      log(
        `  still building... ${Math.round((Date.now() - started) / 1000)} s, ${packages} packages compiled`,
      ),
    30_000,
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
  try {
    if (code !== 0)
      throw new Error(`go install of the Temporal server failed (exit ${code}):\n${tail.join('\n')}`);
    mkdirSync(dir, { recursive: true });
    for (const b of BINARIES) renameSync(path.join(staging, b.built), path.join(dir, b.name));
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  log(`Temporal server built in ${Math.round((Date.now() - started) / 1000)} s: ${dir}`);
  return serverBinaries(dir);
}
