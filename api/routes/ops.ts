// Operational endpoints (document 2, "Operational endpoints"): they report, never repair.
import { accessSync, constants, statfsSync } from 'node:fs';
import { type Request, Router } from 'express';
import { z } from 'zod';
import { isSystemAdmin } from '../../domain/access.ts';
import { checkCompatibility } from '../../migrations/runner.ts';
import type { AppDeps } from '../../services/deps.ts';
import { sandboxStatus } from '../../services/sandbox/sandboxed.ts';
import { resolveSession } from '../middleware/auth.ts';
import { endpoint } from '../openapi/endpoint.ts';

/** The workspace check fails below this much free space (autonomous work writes checkouts there). */
export const MIN_WORKSPACE_FREE_BYTES = 64 * 1024 * 1024;

type Check = { status: 'ok' | 'fail' | 'off' | 'unavailable'; detail?: string; [k: string]: unknown };

const withTimeout = <T>(p: Promise<T>, ms: number, what: string) =>
  Promise.race([
    p,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms).unref(),
    ),
  ]);

// Declarations (api/openapi/endpoint.ts). The probes take no input and need no credentials (load
// balancers and orchestrators call them), so they declare only what they answer.
// `off` and `unavailable` belong to the checks reported but not part of readiness (sandbox, background
// services).
const check = z.looseObject({
  status: z.enum(['ok', 'fail', 'off', 'unavailable']),
  detail: z.string().optional(),
});
const readinessAnswer = z.looseObject({
  status: z.enum(['ready', 'not_ready']),
  checks: z.record(z.string(), check),
});
const PROBE = 'Public probe (no credentials, no input): failure details only for a system administrator.';
const getLivez = endpoint({
  tags: ['ops'],
  summary: 'Liveness: the process answers',
  description: 'Public probe (no credentials, no input); never touches the database.',
  auth: 'public',
  responses: { 200: z.object({ status: z.literal('alive') }) },
});
const getReadyz = endpoint({
  tags: ['ops'],
  summary: 'Readiness: database, schema revision, background services, data and workspace directories',
  description: PROBE,
  auth: 'public',
  responses: { 200: readinessAnswer, 503: readinessAnswer },
});
const getHealth = endpoint({
  tags: ['ops'],
  summary: 'Readiness: deprecated alias of /readyz',
  description: `${PROBE} The body adds \`deprecated: true\`.`,
  auth: 'public',
  responses: {
    200: readinessAnswer.extend({ deprecated: z.literal(true) }),
    503: readinessAnswer.extend({ deprecated: z.literal(true) }),
  },
});
const getMetrics = endpoint({
  tags: ['ops'],
  summary: 'Prometheus metrics',
  description: 'Public, for the scraper (no credentials, no input): the Prometheus text exposition format.',
  auth: 'public',
  responses: { 200: 'Prometheus text exposition format (text/plain; version=0.0.4)' },
});

export function opsRouter(deps: AppDeps): Router {
  const r = Router();

  r.get('/livez', getLivez, (_req, res) => {
    res.json({ status: 'alive' });
  });

  const readiness = async () => {
    const checks: Record<string, Check> = {};
    try {
      await withTimeout(deps.database.ping(), 2000, 'database ping');
      checks.database = { status: 'ok', dialect: deps.database.dialect };
      deps.metrics.databaseUp.set(1);
    } catch (err) {
      checks.database = { status: 'fail', detail: (err as Error).message };
      deps.metrics.databaseUp.set(0);
    }
    if (checks.database.status === 'ok') {
      try {
        const c = await withTimeout(checkCompatibility(deps.database.sql), 2000, 'schema check');
        checks.schema_version = {
          status: c.compatible ? 'ok' : 'fail',
          compatible: c.compatible,
          current: c.current,
          required: c.required,
        };
      } catch (err) {
        checks.schema_version = {
          status: 'fail',
          compatible: false,
          current: 'unknown',
          required: 'unknown',
          detail: (err as Error).message,
        };
      }
    } else
      checks.schema_version = {
        status: 'fail',
        compatible: false,
        current: 'unknown',
        required: 'unknown',
        detail: 'database unavailable',
      };
    const bg = await withTimeout(deps.temporal.backgroundStatus(), 3000, 'Temporal probe').catch(
      (err: Error) => ({ ok: false, detail: err.message }),
    );
    try {
      accessSync(deps.settings.dataDir, constants.W_OK);
      checks.config_directory = { status: 'ok' };
    } catch {
      checks.config_directory = {
        status: 'fail',
        detail: `data directory ${deps.settings.dataDir} is not writable`,
      };
    }
    checks.workspace = workspaceCheck(deps.settings.workspaceDir);
    const ready = Object.values(checks).every((c) => c.status === 'ok');
    // Reported, not part of readiness (the spec's /readyz checks are the database, the schema, the
    // configuration directory and the workspace): an API instance serves chat, output, the agent, the
    // model proxy and uploads without Temporal, so an outage or a moment without a worker must not take
    // every instance out of the load balancer. What needs Temporal answers 503 with Retry-After.
    checks.background_services = { status: bg.ok ? 'ok' : 'unavailable', detail: bg.detail };
    deps.metrics.workerRunning.set(bg.ok ? 1 : 0);
    // Reported, not part of readiness: the API's own routes serve without it; what it decides is
    // whether untrusted work (autonomous CLIs, CI, hooks) runs here or is refused (services/sandbox/).
    checks.sandbox = sandboxStatus(deps.settings);
    return { ready, body: { status: ready ? 'ready' : 'not_ready', checks } };
  };

  // Failure details (paths, driver messages) are for administrators; everyone else (load balancers,
  // probes) gets the statuses and revisions only.
  const visibleTo = async (req: Request, body: { checks: Record<string, Check> }) => {
    const s = await resolveSession(deps, req).catch(() => undefined);
    if (s?.ok && isSystemAdmin(s.auth.user)) return body;
    const checks = Object.fromEntries(
      Object.entries(body.checks).map(([k, { detail: _omit, ...rest }]) => [k, rest]),
    );
    return { ...body, checks };
  };

  r.get('/readyz', getReadyz, async (req, res) => {
    const { ready, body } = await readiness();
    res.status(ready ? 200 : 503).json(await visibleTo(req, body));
  });

  // Deprecated alias of /readyz (spec, Versioning 2).
  r.get('/health', getHealth, async (req, res) => {
    const { ready, body } = await readiness();
    res.status(ready ? 200 : 503).json({ ...(await visibleTo(req, body)), deprecated: true });
  });

  r.get('/metrics', getMetrics, async (_req, res) => {
    res.type(deps.metrics.registry.contentType).send(await deps.metrics.registry.metrics());
  });

  return r;
}

/** The workspace directory exists, is writable and has room (reports only: never creates it). */
function workspaceCheck(dir: string): Check {
  try {
    accessSync(dir, constants.W_OK);
  } catch {
    return { status: 'fail', detail: `workspace directory ${dir} is missing or not writable` };
  }
  const fs = statfsSync(dir);
  const free = fs.bavail * fs.bsize;
  return free >= MIN_WORKSPACE_FREE_BYTES
    ? { status: 'ok', free_bytes: free }
    : { status: 'fail', free_bytes: free, detail: `workspace directory ${dir} has less than 64 MiB free` };
}
