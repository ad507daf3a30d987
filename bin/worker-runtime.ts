// Creates and runs the Temporal worker. The webpack bundle of workflows/ is cached on disk keyed by a
// hash of the workflow sources (and what they import), so warm starts skip the multi-second bundling.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  bundleWorkflowCode,
  NativeConnection,
  type NativeConnectionOptions,
  Runtime,
  Worker,
} from '@temporalio/worker';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const WORKFLOWS = path.join(ROOT, 'workflows', 'index.ts');

function sourceHash(): string {
  const h = createHash('sha256');
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = path.join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(ts|js|json)$/.test(name)) h.update(p).update(readFileSync(p));
    }
  };
  for (const dir of ['workflows', 'domain']) if (existsSync(path.join(ROOT, dir))) walk(path.join(ROOT, dir));
  h.update(readFileSync(path.join(ROOT, 'node_modules', '@temporalio', 'workflow', 'package.json')));
  return h.digest('hex').slice(0, 16);
}

export async function workflowBundle(cacheDir: string | undefined, log: (l: string) => void) {
  const file = cacheDir ? path.join(cacheDir, `workflow-bundle-${sourceHash()}.js`) : undefined;
  if (file && existsSync(file)) return { code: readFileSync(file, 'utf8') };
  const started = Date.now();
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS, logger: quietLogger });
  log(`bundled workflow code in ${Date.now() - started} ms`);
  if (file) {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, code);
  }
  return { code };
}

const noop = () => {};
const quietLogger = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop } as any;

let runtimeInstalled = false;

export interface RunningWorker {
  worker: Worker;
  done: Promise<void>;
  stop(): Promise<void>;
}

export async function startWorker(opts: {
  address: string;
  namespace: string;
  taskQueue: string;
  activities: Record<string, (...args: any[]) => any>;
  cacheDir?: string;
  log?: (l: string) => void;
  /** TLS / mTLS / API key of the cluster (config/temporal-connection.ts); unset: plain `address`. */
  connection?: NativeConnectionOptions;
  /** SVC_TEMPORAL_STICKY_TIMEOUT_MS; unset: the SDK's default (10 s). */
  stickyTimeoutMs?: number;
  /** The longest an activity heartbeat is held back (SVC_TEMPORAL_HEARTBEAT_THROTTLE_MS); unset: the SDK's. */
  heartbeatThrottleMs?: number;
}): Promise<RunningWorker> {
  const log = opts.log ?? (() => {});
  if (!runtimeInstalled) {
    // The SDK's default runtime logs every worker state change to the console; keep only warnings.
    Runtime.install({
      logger: {
        ...quietLogger,
        warn: (m: string) => log(`temporal: ${m}`),
        error: (m: string) => log(`temporal: ${m}`),
      } as any,
    });
    runtimeInstalled = true;
  }
  const connection = await NativeConnection.connect(opts.connection ?? { address: opts.address });
  const worker = await Worker.create({
    connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    workflowBundle: await workflowBundle(opts.cacheDir, log),
    activities: opts.activities,
    ...(opts.stickyTimeoutMs !== undefined
      ? { stickyQueueScheduleToStartTimeout: opts.stickyTimeoutMs }
      : {}),
    ...(opts.heartbeatThrottleMs !== undefined
      ? { maxHeartbeatThrottleInterval: opts.heartbeatThrottleMs }
      : {}),
  });
  const done = worker.run().finally(() => connection.close());
  return {
    worker,
    done,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
    },
  };
}
