// `npm run api` and `npm run worker` as separate processes (the scale-out and production topology
// tests), without npm in between (npm dies of a SIGTERM itself), with the output kept for assertions
// and failure messages.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { workflowBundle } from '../../bin/worker-runtime.ts';
import { nodeEntry, sourceEntry } from './node-entry.ts';
import { waitUntil } from './remote.ts';

const BUNDLE_CACHE = path.resolve('node_modules/.cache/svc');

export interface SvcProcess {
  name: string;
  child: ChildProcess;
  output(): string;
}

/**
 * `asTyped`: exactly the command npm runs (`node --import tsx bin/<script>.ts`), for a test whose
 * subject is that command (the production topology); otherwise the same program from the bundle
 * `npm test` built (support/node-entry.ts: about 3 CPU-seconds less per start), when there is one.
 */
export function launchSvc(
  name: string,
  script: 'api' | 'worker',
  env: Record<string, string>,
  opts: { asTyped?: boolean } = {},
): SvcProcess {
  // SCALE_PROFILE_DIR=<dir>: each process writes a V8 CPU profile there when it stops (diagnosis).
  const profile = process.env.SCALE_PROFILE_DIR
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.SCALE_PROFILE_DIR}`]
    : [];
  const entry = (opts.asTyped ? sourceEntry : nodeEntry)(`bin/${script}.ts`);
  const child = spawn(process.execPath, [...profile, ...entry], {
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      SVC_TEMPORAL_DEV_PORT: '0',
      SVC_TEMPORAL_UI_PORT: '0',
      SVC_ENCRYPTION_KEY: 'scale-encryption-key',
      SECRET_KEY: 'scale-secret-key',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (b) => (out += b));
  child.stderr!.on('data', (b) => (out += b));
  return { name, child, output: () => out };
}

/** The URL an API process prints once it listens. */
export function apiUrl(p: SvcProcess, timeoutMs = 90_000): Promise<string> {
  return waitUntil(
    `${p.name} to listen`,
    async () => {
      if (p.child.exitCode !== null) throw new Error(`${p.name} exited:\n${p.output().slice(-2000)}`);
      return p.output().match(/API listening on (\S+)/)?.[1];
    },
    timeoutMs,
    100,
  );
}

export const running = (p: SvcProcess) => p.child.exitCode === null && p.child.signalCode === null;

/** SIGTERM to every process still running, SIGKILL to those still there after 10 s. */
export async function stopSvcProcesses(processes: SvcProcess[]): Promise<void> {
  for (const p of processes) if (running(p)) p.child.kill('SIGTERM');
  await Promise.all(
    processes.map(
      ({ child }) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
          child.once('exit', () => {
            clearTimeout(t);
            resolve();
          });
        }),
    ),
  );
}

/**
 * Points `<dataDir>/cache` (where a worker looks for its workflow bundle) at the bundle the test files
 * share (built here when missing), so that workers starting together do not each bundle it.
 */
export async function shareWorkflowBundle(dataDir: string): Promise<void> {
  await workflowBundle(BUNDLE_CACHE, () => {});
  mkdirSync(dataDir, { recursive: true });
  symlinkSync(BUNDLE_CACHE, path.join(dataDir, 'cache'));
}

/** A data directory of its own for worker processes, with the shared workflow bundle. */
export async function workerDataDir(dataDir: string): Promise<string> {
  const workerDir = path.join(dataDir, 'worker');
  await shareWorkflowBundle(workerDir);
  return workerDir;
}
