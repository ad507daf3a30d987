// POST /api/summary/refresh (spec document 2, Usage: "recomputes from daily_messages") and its status.
// The recompute is a Temporal workflow (workflows/usage/summary-refresh.ts), so a large refresh runs
// in steps, survives restarts and shows its progress; the endpoint starts it and answers at once.
//
//   POST /api/summary/refresh?host=H        202 {workflow_id, status, status_url}
//   GET  /api/summary/refresh/:workflow_id  {workflow_id, status, progress, error?}
//
// Admin only. The aggregate tables it rewrites are global (they carry no tenant), and the recompute
// changes no figure that was right, so any administrator may start it; each start is audited. Only
// summary-refresh workflows can be read here: any other id is a 404.
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/common';
import { Router } from 'express';
import { z } from 'zod';
import { NotFoundError } from '../../../domain/errors.ts';
import { writeAudit } from '../../../services/audit.ts';
import type { AppDeps } from '../../../services/deps.ts';
import { backgroundUnavailable, isTemporalUnavailable } from '../../../services/temporal-unavailable.ts';
import {
  SUMMARY_REFRESH_ID_PREFIX,
  type SummaryRefreshProgress,
  summaryRefreshProgressQuery,
  summaryRefreshWorkflow,
} from '../../../workflows/usage/summary-refresh.ts';
import { authenticate, requireAdmin } from '../../middleware/auth.ts';
import { endpoint } from '../../openapi/endpoint.ts';

const refreshQuery = z.object({ host: z.string().min(1).max(255).optional() });
/** The ids this endpoint hands out: the prefix and a UUID (no other workflow is reachable). */
const ID_SHAPE = /^summary-refresh-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** How long the status endpoint waits for the workflow's progress query. */
const QUERY_WAIT_MS = 5_000;

const statusUrl = (id: string) => `/api/summary/refresh/${id}`;

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const getSummaryRefreshStatus = endpoint({
  tags: ['usage'],
  summary: 'Status of a summary refresh run',
  responses: {
    200: z.looseObject({
      workflow_id: z.string(),
      status: z.string(),
      progress: z.looseObject({}).nullable(),
      error: z.string().optional(),
    }),
  },
  errors: [503],
});
const postSummaryRefresh = endpoint({
  tags: ['usage'],
  query: refreshQuery,
  responses: {
    202: z.looseObject({ workflow_id: z.string(), status: z.literal('running'), status_url: z.string() }),
  },
  errors: [503],
});

export function summaryRefreshRouter(deps: AppDeps): Router {
  const r = Router();
  const admin = [authenticate(deps), requireAdmin];
  const unavailable = (err: unknown): never => {
    if (err instanceof NotFoundError) throw err;
    deps.logger.error({ err }, 'summary refresh: Temporal call failed');
    throw backgroundUnavailable();
  };

  r.post('/api/summary/refresh', postSummaryRefresh, ...admin, async (req, res) => {
    const q = postSummaryRefresh.query(req);
    const workflowId = `${SUMMARY_REFRESH_ID_PREFIX}${randomUUID()}`;
    try {
      const client = await deps.temporal.client();
      await client.workflow.start(summaryRefreshWorkflow, {
        workflowId,
        taskQueue: deps.temporal.taskQueue,
        args: [{ host: q.host ?? null }],
      });
    } catch (err) {
      unavailable(err);
    }
    await writeAudit(deps, req, {
      action: 'SUMMARY_REFRESH',
      resourceType: 'usage_aggregates',
      resourceId: workflowId,
      details: { host: q.host ?? null },
    });
    res.status(202).json({ workflow_id: workflowId, status: 'running', status_url: statusUrl(workflowId) });
  });

  r.get('/api/summary/refresh/:workflow_id', getSummaryRefreshStatus, ...admin, async (req, res) => {
    const id = req.params.workflow_id as string;
    if (!ID_SHAPE.test(id)) throw new NotFoundError('Summary refresh not found');
    try {
      const client = await deps.temporal.client();
      const handle = client.workflow.getHandle(id);
      const described = await handle.describe().catch((err: unknown) => {
        if (err instanceof WorkflowNotFoundError && !isTemporalUnavailable(err))
          throw new NotFoundError('Summary refresh not found');
        throw err;
      });
      const status = (described.status.name ?? 'UNKNOWN').toLowerCase();
      let progress: SummaryRefreshProgress | null = null;
      let error: string | undefined;
      if (status === 'completed') progress = await handle.result();
      // A query needs a worker; while none answers (within QUERY_WAIT_MS), the status alone is reported.
      else if (status === 'running')
        progress = await client
          .withDeadline(Date.now() + QUERY_WAIT_MS, () => handle.query(summaryRefreshProgressQuery))
          .catch(() => null);
      else
        error = await handle.result().then(
          () => undefined,
          (e: unknown) => ((e as Error)?.cause as Error | undefined)?.message ?? (e as Error)?.message,
        );
      res.json({ workflow_id: id, status, progress, ...(error ? { error } : {}) });
    } catch (err) {
      unavailable(err);
    }
  });

  return r;
}
