// Startup and shutdown pieces shared by the entry points (start = all in one, api, worker).
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { Logger } from 'pino';
import { attachAlertSocket } from '../api/alerts-socket.ts';
import { createApp } from '../api/app.ts';
import { sendProxyError } from '../api/llm-proxy/proxy-error.ts';
import { LLM_PROXY_PREFIX } from '../api/routes/remote/llm-proxy.ts';
import { attachTerminalSocket } from '../api/terminal-socket.ts';
import type { Settings } from '../config/settings.ts';
import { temporalConnection } from '../config/temporal-connection.ts';
import type { DatabaseHandle } from '../db/client.ts';
import { BCRYPT_ROUNDS, bcryptRounds } from '../domain/passwords.ts';
import { startAlertWebhookTrigger } from '../services/alerts/webhook-delivery.ts';
import { ensureAutonomousQuotaResumeSchedule } from '../services/autonomous/quota-resume-schedule.ts';
import { ensureCollectSchedule } from '../services/collectors/schedule.ts';
import type { AppDeps } from '../services/deps.ts';
import { createLogger } from '../services/logger.ts';
import { ensureMaintenanceSchedules } from '../services/maintenance-schedules.ts';
import { createMetrics } from '../services/metrics.ts';
import { ensureOrgSyncSchedules } from '../services/orgsync/schedule.ts';
import { ensureQuotaEnforcementSchedule } from '../services/quota-enforcement.ts';
import { heartbeatsBehind } from '../services/remote-heartbeats.ts';
import { createTemporalAccess, type TemporalAccess } from '../services/temporal.ts';
import { flushUsageAtShutdown } from '../services/usage/remote-messages.ts';
import { StartupError } from './startup.ts';
import type { RunningWorker } from './worker-runtime.ts';

export const MAX_HEADER_BYTES = 16 * 1024;

export function buildDeps(
  settings: Settings,
  database: DatabaseHandle,
  temporal: TemporalAccess,
  logger: Logger,
): AppDeps {
  // The workspace is created at startup; /readyz only reports on it.
  mkdirSync(settings.workspaceDir, { recursive: true });
  if (bcryptRounds !== BCRYPT_ROUNDS)
    logger.warn(
      { bcrypt_rounds: bcryptRounds },
      `new password hashes use ${bcryptRounds} bcrypt rounds, not ${BCRYPT_ROUNDS} (SVC_TEST_BCRYPT_ROUNDS is for test runs only)`,
    );
  return { settings, database, temporal, logger, metrics: createMetrics(), now: () => new Date() };
}

export function connectTemporal(settings: Settings, address: string): TemporalAccess {
  return createTemporalAccess({
    address,
    namespace: settings.TEMPORAL_NAMESPACE,
    taskQueue: settings.TEMPORAL_TASK_QUEUE,
    // TLS / mTLS / API key of the cluster: the same options as the worker's (config/temporal-connection.ts).
    connection: temporalConnection(settings, address).client,
    connectTimeoutMs: settings.SVC_TEMPORAL_CONNECT_TIMEOUT_MS,
    retryBudgetMs: settings.SVC_TEMPORAL_RETRY_BUDGET_MS,
  });
}

export async function listen(
  deps: AppDeps,
): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const app = createApp(deps);
  let closing = false;
  // Request headers are capped at 16 KiB in total (Node's default, stated so it cannot drift): a
  // larger head is answered 431 before any of our code, or any regex, sees it.
  const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => {
    // Shutting down: no new proxied call starts (its usage could not be written before the database
    // closes); the caller retries on another instance. Node ends the kept-alive connections itself.
    if (closing && (req.url ?? '').toLowerCase().startsWith(LLM_PROXY_PREFIX))
      return sendProxyError(res, 503, 'proxy_error', 'The server is shutting down; retry shortly', {
        'retry-after': '1',
      });
    app(req, res);
  }).listen(deps.settings.PORT, deps.settings.HOST);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new StartupError(
          err.code === 'EADDRINUSE'
            ? `Port ${deps.settings.PORT} on ${deps.settings.HOST} is already in use; set PORT to another value.`
            : err.message,
        ),
      ),
    );
  });
  // socket.io namespace /alerts on the same HTTP server (api/alerts-socket.ts).
  const alertSocket = attachAlertSocket(server, deps);
  // Long polls and SSE are held open for up to ~25 s; keep idle sockets a little longer than that.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.requestTimeout = 300_000;
  // Robot webhook pushes of every new alert (each instance subscribes; the workflow id delivers once).
  const stopAlertWebhooks = startAlertWebhookTrigger(deps);
  const addr = server.address() as { port: number };
  const host = deps.settings.HOST.includes(':') ? `[${deps.settings.HOST}]` : deps.settings.HOST;
  // The live terminal relay's WebSocket (api/terminal-socket.ts), same server.
  const terminalSocket = attachTerminalSocket(server, deps, `http://${host}:${addr.port}`);
  return {
    server,
    url: `http://${host}:${addr.port}`,
    // Graceful: stop taking calls, let the calls in flight end (3 s at most), then write the usage
    // still held in memory (quota settles and reporting rows, then the message rows of proxied calls)
    // and the agents' heartbeats written behind, before the caller closes the database.
    close: async () => {
      closing = true;
      await new Promise<void>((resolve) => {
        alertSocket.close();
        terminalSocket.close();
        stopAlertWebhooks();
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 3000).unref();
      });
      await flushUsageAtShutdown(deps);
      await heartbeatsBehind(deps.database).flush();
    },
  };
}

export async function runWorker(
  settings: Settings,
  address: string,
  database: DatabaseHandle,
  log: (l: string) => void,
  cacheDir = `${settings.dataDir}/cache`,
): Promise<RunningWorker> {
  // One set of connection options (TLS / mTLS / API key) for the schedules' clients and the worker.
  const temporal = temporalConnection(settings, address);
  const connection = temporal.client;
  log(`Temporal: ${temporal.summary}`);
  await ensureMaintenanceSchedules({
    address,
    namespace: settings.TEMPORAL_NAMESPACE,
    taskQueue: settings.TEMPORAL_TASK_QUEUE,
    connection,
    sessionStatsEveryMinutes: settings.SVC_SESSION_STATS_REFRESH_MINUTES,
  }).catch((err) => {
    throw new StartupError(`Cannot create the maintenance schedules: ${(err as Error).message}`);
  });
  await ensureQuotaEnforcementSchedule({
    address,
    namespace: settings.TEMPORAL_NAMESPACE,
    taskQueue: settings.TEMPORAL_TASK_QUEUE,
    connection,
    multiTenant: settings.quota.multi_tenant,
    intervalSeconds: settings.quota.enforcement_interval_seconds,
  }).catch((err) => {
    throw new StartupError(`Cannot create the quota enforcement schedule: ${(err as Error).message}`);
  });
  // Auto-resume of quota-paused autonomous workflows: the enforcement tick does it in multi-tenant mode,
  // this schedule otherwise (services/autonomous/quota-resume-schedule.ts).
  await ensureAutonomousQuotaResumeSchedule({
    address,
    namespace: settings.TEMPORAL_NAMESPACE,
    taskQueue: settings.TEMPORAL_TASK_QUEUE,
    connection,
    multiTenant: settings.quota.multi_tenant,
    intervalSeconds: settings.quota.enforcement_interval_seconds,
  }).catch((err) => {
    throw new StartupError(`Cannot create the autonomous quota resume schedule: ${(err as Error).message}`);
  });
  // Org sync of the chat platforms (services/orgsync/schedule.ts): ensured when enabled, else removed.
  await ensureOrgSyncSchedules({
    address,
    namespace: settings.TEMPORAL_NAMESPACE,
    taskQueue: settings.TEMPORAL_TASK_QUEUE,
    connection,
    settings,
  }).catch((err) => {
    throw new StartupError(`Cannot create the org sync schedules: ${(err as Error).message}`);
  });
  // The background fetch scheduler (services/collectors/schedule.ts): ensured when enabled, else removed.
  await ensureCollectSchedule({
    address,
    namespace: settings.TEMPORAL_NAMESPACE,
    taskQueue: settings.TEMPORAL_TASK_QUEUE,
    connection,
    collectors: settings.collectors,
  }).catch((err) => {
    throw new StartupError(`Cannot create the collection schedule: ${(err as Error).message}`);
  });
  // The schedules are ensured BEFORE the worker polls: once it polls, the API reports ready and may be
  // told to stop, and a signal that arrives before the caller has installed its shutdown handlers would
  // leave the Temporal runtime's own handler stopping the worker while the process lives on.
  // @temporalio/worker (its native bridge and webpack) and the activities are loaded by processes that
  // run a worker, not by every process that imports this module (an API-only instance, most test files).
  const [{ startWorker }, { createActivities }] = await Promise.all([
    import('./worker-runtime.ts'),
    import('../activities/index.ts'),
  ]);
  const worker = await startWorker({
    address,
    namespace: settings.TEMPORAL_NAMESPACE,
    taskQueue: settings.TEMPORAL_TASK_QUEUE,
    activities: createActivities({ database, settings, now: () => new Date() }),
    cacheDir,
    log,
    connection: temporal.native,
    stickyTimeoutMs: settings.SVC_TEMPORAL_STICKY_TIMEOUT_MS,
    heartbeatThrottleMs: settings.SVC_TEMPORAL_HEARTBEAT_THROTTLE_MS,
  });
  return worker;
}

export function makeLogger(settings: Settings): Logger {
  return createLogger(settings.LOG_LEVEL);
}

/** Runs `steps` in order on SIGINT/SIGTERM; a second signal exits at once. */
export function onShutdown(steps: { name: string; run: () => Promise<unknown> }[], log: (l: string) => void) {
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      log(`${signal} again: exiting now`);
      process.exit(130);
    }
    stopping = true;
    log(`${signal} received, shutting down...`);
    for (const step of steps) {
      try {
        log(`stopping ${step.name}...`);
        await step.run();
      } catch (err) {
        log(`shutdown: ${step.name} failed: ${(err as Error).message}`);
      }
    }
    log('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}
