// Collection runs (spec document 2, "Upload, fetch and reports"; issue 10 item 3). Bodies are not shown
// by the spec, so chosen here and documented in docs/integrators/collectors.md "Collecting transcripts":
//
//   POST /api/fetch/data          system administrators (the run reads the server host's folders and
//                                 stores messages of every tenant). Starts the collection workflow
//                                 (workflows/usage/collect.ts) over every configured source:
//                                 202 {run_id, status: 'running', status_url}.
//                                 One run at a time: while one runs, 409 {error, run_id: <running id>}.
//                                 503 when the workflow service is unreachable.
//   GET  /api/fetch/status        system administrators. ?limit (1-100, default 20), ?run_id (one run,
//                                 404 unknown): {runs: [...newest first], running: run id or null}; a
//                                 running run carries the live figures of its `progress` query.
//                                 Runs of the background fetch scheduler (services/collectors/
//                                 schedule.ts) are listed alike: trigger 'schedule', requested_by null.
//   GET  /api/data-status         view_dashboard. Per source: the last run, files tracked, messages
//                                 stored (tenant-scoped: daily_messages.tenant_id), and for the remote
//                                 agents' usage reports their count and last received time (scoped by
//                                 the reporting user's tenant). Files and runs belong to no tenant.
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { Router } from 'express';
import { z } from 'zod';
import { type CollectorRunRow, collectorsRepository } from '../../../db/repositories/collectors.ts';
import { rawScopeCondition } from '../../../db/tenant-scope-sql.ts';
import { runTotals } from '../../../domain/collectors/progress.ts';
import { AGENT_REPORTS_SOURCE, TRANSCRIPT_SOURCES } from '../../../domain/collectors/sources.ts';
import { AppError, NotFoundError } from '../../../domain/errors.ts';
import { readScope } from '../../../domain/tenant-scope.ts';
import { writeAudit } from '../../../services/audit.ts';
import { collectRunInput } from '../../../services/collectors/run-input.ts';
import type { AppDeps } from '../../../services/deps.ts';
import { rethrowIfTemporalUnavailable } from '../../../services/temporal-unavailable.ts';
import { collectUsageWorkflow } from '../../../workflows/usage/collect.ts';
import {
  type CollectRunProgress,
  collectProgressQuery,
  collectWorkflowId,
} from '../../../workflows/usage/contract.ts';
import { authenticate, requirePermission, requireSystemAdmin } from '../../middleware/auth.ts';
import { endpoint } from '../../openapi/endpoint.ts';

export const DEFAULT_FETCH_STATUS_LIMIT = 20;
const PROGRESS_WAIT_MS = 2000;

const statusQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(DEFAULT_FETCH_STATUS_LIMIT),
  run_id: z.string().min(1).max(100).optional(),
});

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function parseDetail(detail: string | null): unknown[] {
  if (!detail) return [];
  try {
    const v = JSON.parse(detail);
    return Array.isArray(v) ? v : [];
  } catch {
    return [];
  }
}

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const postFetchData = endpoint({
  tags: ['usage'],
  responses: {
    202: z.looseObject({ run_id: z.string(), status: z.literal('running'), status_url: z.string() }),
  },
  errors: [409, 503],
});
const getFetchStatus = endpoint({
  tags: ['usage'],
  query: statusQuery,
  responses: {
    200: z.looseObject({
      runs: z.array(
        z.looseObject({
          run_id: z.string(),
          trigger: z.string(),
          status: z.string(),
          started_at: z.string().nullable(),
          finished_at: z.string().nullable(),
        }),
      ),
      running: z.string().nullable(),
    }),
  },
});
const getDataStatus = endpoint({
  tags: ['usage'],
  responses: {
    200: z.looseObject({
      last_run: z
        .looseObject({ run_id: z.string(), status: z.string(), started_at: z.string().nullable() })
        .nullable(),
      sources: z.array(z.looseObject({ source: z.string(), kind: z.string() })),
    }),
  },
});

export function fetchRouter(deps: AppDeps): Router {
  const r = Router();
  const repo = collectorsRepository(deps.database.sql);
  const workflowId = collectWorkflowId(deps.temporal.taskQueue);
  const admin = [authenticate(deps), requireSystemAdmin];

  /**
   * The live progress of a running run, or null when the workflow does not answer within
   * PROGRESS_WAIT_MS (a query waits for a worker: none may be polling right now).
   */
  async function liveProgress(runId: string): Promise<CollectRunProgress | null> {
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), PROGRESS_WAIT_MS);
    });
    const asked = (async () => {
      const client = await deps.temporal.client();
      return client.workflow.getHandle(workflowId, runId).query(collectProgressQuery);
    })().catch(() => null);
    try {
      return await Promise.race([asked, gaveUp]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The Temporal status of a run's workflow (RUNNING, COMPLETED, TERMINATED, ...), null if unknown. */
  async function workflowStatus(runId: string): Promise<string | null> {
    try {
      const client = await deps.temporal.client();
      return (await client.workflow.getHandle(workflowId, runId).describe()).status.name;
    } catch {
      return null;
    }
  }

  async function runView(row: CollectorRunRow) {
    let run = row;
    let ended: string | null = null;
    if (run.status === 'running') {
      const wf = await workflowStatus(run.runId);
      // Finished between the two reads: the row is final now.
      if (wf === 'COMPLETED') run = (await repo.run(run.runId)) ?? run;
      // Terminated, timed out or cancelled before it could record its end.
      else if (wf !== null && wf !== 'RUNNING') ended = wf;
    }
    const view = {
      run_id: run.runId,
      trigger: run.trigger,
      status: run.status,
      requested_by: run.requestedBy,
      started_at: iso(run.startedAt),
      finished_at: iso(run.finishedAt),
      files_read: run.filesRead,
      messages_read: run.messagesRead,
      messages_stored: run.messagesStored,
      duplicates: run.duplicates,
      error_count: run.errorCount,
      error: run.error,
      sources: parseDetail(run.detail),
    };
    if (ended !== null)
      return { ...view, status: 'failed', error: `The run's workflow ended without finishing (${ended})` };
    if (run.status !== 'running') return view;
    const live = await liveProgress(run.runId);
    if (!live) return view;
    const t = runTotals(live.sources);
    return {
      ...view,
      status: live.status,
      current_source: live.current_source,
      files_read: t.filesRead,
      messages_read: t.messagesRead,
      messages_stored: t.messagesStored,
      duplicates: t.duplicates,
      error_count: t.errorCount,
      sources: live.sources,
    };
  }

  r.post('/api/fetch/data', postFetchData, ...admin, async (req, res) => {
    let runId: string;
    try {
      const client = await deps.temporal.client();
      const handle = await client.workflow.start(collectUsageWorkflow, {
        workflowId,
        taskQueue: deps.temporal.taskQueue,
        args: [collectRunInput('api', req.auth.user.id)],
        workflowIdConflictPolicy: 'FAIL',
      });
      runId = handle.firstExecutionRunId;
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) {
        const running = await (await deps.temporal.client()).workflow
          .getHandle(workflowId)
          .describe()
          .then((d) => d.runId)
          .catch(() => null);
        throw new AppError(409, 'A collection run is already running', { run_id: running });
      }
      rethrowIfTemporalUnavailable(err);
      throw err;
    }
    await repo.ensureRun(runId, 'api', req.auth.user.id, deps.now());
    await writeAudit(deps, req, {
      action: 'usage_collection_started',
      resourceType: 'collector_run',
      resourceId: runId,
      details: { sources: [...TRANSCRIPT_SOURCES] },
    });
    res.status(202).json({
      run_id: runId,
      status: 'running',
      status_url: `/api/fetch/status?run_id=${encodeURIComponent(runId)}`,
    });
  });

  r.get('/api/fetch/status', getFetchStatus, ...admin, async (req, res) => {
    const q = getFetchStatus.query(req);
    let runs: CollectorRunRow[];
    if (q.run_id !== undefined) {
      const run = await repo.run(q.run_id);
      if (!run) throw new NotFoundError('Collection run not found');
      runs = [run];
    } else runs = await repo.recentRuns(q.limit);
    const views = await Promise.all(runs.map(runView));
    const running = views.find((v) => v.status === 'running');
    res.json({ runs: views, running: running?.run_id ?? null });
  });

  r.get(
    '/api/data-status',
    getDataStatus,
    authenticate(deps),
    requirePermission('view_dashboard'),
    async (req, res) => {
      const scope = readScope(req.auth.user);
      const messageScope = rawScopeCondition(scope, 'tenant_id');
      const reportScope = rawScopeCondition(scope, 'u.tenant_id');
      const [tracked, stored, reports, recent] = await Promise.all([
        repo.trackedFiles(),
        messageScope === false ? new Map() : repo.storedMessages(TRANSCRIPT_SOURCES, messageScope),
        reportScope === false ? { reports: 0, lastReceivedAt: null } : repo.agentReports(reportScope),
        repo.recentRuns(1),
      ]);
      const last = recent[0];
      const lastRun = last
        ? {
            run_id: last.runId,
            status: last.status,
            started_at: iso(last.startedAt),
            finished_at: iso(last.finishedAt),
          }
        : null;
      res.json({
        last_run: lastRun,
        sources: [
          ...TRANSCRIPT_SOURCES.map((source) => ({
            source,
            kind: 'transcripts',
            tool_name: source,
            last_run_at: lastRun ? (lastRun.finished_at ?? lastRun.started_at) : null,
            last_run_status: lastRun?.status ?? null,
            files_tracked: tracked.get(source)?.files ?? 0,
            last_read_at: iso(tracked.get(source)?.lastReadAt ?? null),
            messages_stored: stored.get(source)?.messages ?? 0,
            last_message_at: iso(stored.get(source)?.lastMessageAt ?? null),
          })),
          {
            source: AGENT_REPORTS_SOURCE,
            kind: 'usage_reports',
            reports: reports.reports,
            last_received_at: iso(reports.lastReceivedAt),
          },
        ],
      });
    },
  );

  return r;
}
