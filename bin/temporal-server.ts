// The real Temporal server (`go.temporal.io/server`) and its `temporal-sql-tool`, for the production
// topology test and for operators who follow examples/deploy: built with `go install` from the Go module
// proxy into a per-user cache keyed by version (the cold build takes about 11 minutes, so it is done once,
// ahead of the tests: `npm run temporal:install-server`).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { executable, goInstall } from './go-install.ts';

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

/** The cached binaries, or undefined when either is missing. */
export function findTemporalServer(dir = serverCacheDir()): TemporalServerBinaries | undefined {
  const bins = serverBinaries(dir);
  return executable(bins.server) && executable(bins.sqlTool) ? bins : undefined;
}

/** The PostgreSQL schema directories that ship in the server's Go module (downloaded by the build). */
export function postgresSchemaDirs(): { root: string; temporal: string; visibility: string } {
  const modCache =
    spawnSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8' }).stdout?.trim() ||
    path.join(os.homedir(), 'go', 'pkg', 'mod');
  const root = path.join(modCache, `${MODULE}@${TEMPORAL_SERVER_VERSION}`, 'schema', 'postgresql', 'v12');
  return {
    root,
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
  try {
    await goInstall({
      what: `the Temporal server ${TEMPORAL_SERVER_VERSION}`,
      packages: BINARIES.map((b) => `${MODULE}/${b.pkg}@${TEMPORAL_SERVER_VERSION}`),
      gobin: staging,
      goflags: '-buildvcs=false',
      progressEveryMs: 30_000,
      log,
    });
    mkdirSync(dir, { recursive: true });
    for (const b of BINARIES) renameSync(path.join(staging, b.built), path.join(dir, b.name));
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  log(`Temporal server and temporal-sql-tool: ${dir}`);
  return serverBinaries(dir);
}
