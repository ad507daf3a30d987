// Autonomous workflows as resources (spec document 2, "Autonomous development"; issue 13 items 7-8):
// create one or a batch, list, detail, timeline, forks, and the deletes. Controls are controls.ts,
// milestone and PR reads reads.ts, the activity stream events-stream.ts.
//
// Creation: services/autonomous/create-workflows.ts parses the body (400 naming the field), confines
// the project and writes the rows; this handler then starts one Temporal run per created workflow
// (`autonomous-<id>`). If any start fails, the runs already started are terminated and the rows
// deleted again, and the answer is 503 `Background processing is unavailable`: a workflow row exists
// only with a run to drive it.
// Access: every route needs a session (index.ts authenticates once for all of /api/autonomous); creating
// and deleting also need the tenant's permission to run workflows (access.ts mayRunAutonomous); a workflow or batch is the owner's or an administrator's
// (access.ts: 404 unknown or out of scope, 403 someone else's); the list shows the caller's own
// workflows, or the whole scope's for an administrator (domain/autonomous/access.ts).
import { Router } from 'express';
import { z } from 'zod';
import { batchesRepository } from '../../../db/repositories/autonomous/batches.ts';
import { milestonesRepository } from '../../../db/repositories/autonomous/milestones.ts';
import { type WorkflowRow, workflowsRepository } from '../../../db/repositories/autonomous/workflows.ts';
import { workflowListReader } from '../../../domain/autonomous/access.ts';
import { CREATE_BODY_SCHEMAS } from '../../../domain/autonomous/create-input.ts';
import { WORKFLOW_STATUSES } from '../../../domain/autonomous/states.ts';
import { writeAudit } from '../../../services/audit.ts';
import { createAutonomousWorkflows } from '../../../services/autonomous/create-workflows.ts';
import { autonomousDeletion } from '../../../services/autonomous/delete.ts';
import { tenantProjectFolders } from '../../../services/autonomous/projects.ts';
import { autonomousRuns } from '../../../services/autonomous/temporal-runs.ts';
import type { AppDeps } from '../../../services/deps.ts';
import { backgroundUnavailable } from '../../../services/temporal-unavailable.ts';
import { readLargeJson } from '../../middleware/body.ts';
import { endpoint } from '../../openapi/endpoint.ts';
import { AUTONOMOUS_PARAMS, autonomousAccess, BATCH_ID, mayRunAutonomous } from './access.ts';
import { createdAnswer, milestoneAnswer, workflowAnswer, workflowDetailAnswer } from './answers.ts';
import { batchView, milestoneView, workflowDetailView, workflowView } from './views.ts';

export const DEFAULT_WORKFLOW_PAGE = 50;
export const MAX_WORKFLOW_PAGE = 200;

const listQuery = z
  .object({
    status: z.enum(WORKFLOW_STATUSES).optional(),
    batch_id: z.string().max(64).regex(BATCH_ID, 'must be a batch id (ab-<uuid>)').optional(),
    project_id: z.coerce.number().int().min(1).max(2_147_483_647).optional(),
    limit: z.coerce.number().int().min(1).max(MAX_WORKFLOW_PAGE).default(DEFAULT_WORKFLOW_PAGE),
    offset: z.coerce.number().int().min(0).max(1_000_000_000).default(0),
  })
  .strict();

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
// The body is parsed by domain/autonomous/create-input.ts (400 naming the field), which picks one of
// its two zod schemas (`items` present: a batch); the document shows those same schemas.
const postAutonomousWorkflows = endpoint({
  tags: ['autonomous'],
  summary: 'Create an autonomous workflow, or a batch of them',
  selfParsedBody: {
    description:
      'One workflow ({requirement, project_path, ...}) or a batch ({items: [...], project_path, ...}); ' +
      'parsed by parseCreateInput (domain/autonomous/create-input.ts) with these schemas.',
    content: {
      'application/json': z.union([CREATE_BODY_SCHEMAS.single, CREATE_BODY_SCHEMAS.batch]),
    },
  },
  responses: { 201: createdAnswer },
  errors: [503],
});
const getAutonomousWorkflows = endpoint({
  tags: ['autonomous'],
  query: listQuery,
  responses: {
    200: z.looseObject({
      workflows: z.array(workflowAnswer),
      total: z.number().int(),
      limit: z.number().int(),
      offset: z.number().int(),
      project_roots: z
        .array(z.string())
        .describe(
          "The caller's own project folders (`<root>/tenant-<id>` for each root of SVC_AUTONOMOUS_PROJECT_ROOTS): a project_path must be a Git repository inside one; empty without a tenant",
        ),
    }),
  },
});
const getAutonomousWorkflow = endpoint({
  params: AUTONOMOUS_PARAMS.workflow,
  tags: ['autonomous'],
  responses: { 200: workflowDetailAnswer },
});
const getAutonomousWorkflowsTimeline = endpoint({
  params: AUTONOMOUS_PARAMS.workflow,
  tags: ['autonomous'],
  responses: { 200: z.looseObject({ workflow_id: z.string(), milestones: z.array(milestoneAnswer) }) },
});
const getAutonomousWorkflowsForks = endpoint({
  params: AUTONOMOUS_PARAMS.workflow,
  tags: ['autonomous'],
  responses: { 200: z.looseObject({ workflow_id: z.string(), forks: z.array(workflowAnswer) }) },
});
const deleteAutonomousWorkflows = endpoint({
  params: AUTONOMOUS_PARAMS.workflow,
  tags: ['autonomous'],
  responses: { 204: 'Deleted' },
});
const deleteAutonomousBatches = endpoint({
  params: AUTONOMOUS_PARAMS.batch,
  tags: ['autonomous'],
  responses: { 204: 'Deleted' },
});

export function autonomousWorkflowsRouter(deps: AppDeps): Router {
  const r = Router();
  const access = autonomousAccess(deps);
  const workflows = workflowsRepository(deps.database);
  const milestones = milestonesRepository(deps.database);
  const batches = batchesRepository(deps.database);
  const runs = autonomousRuns(deps.temporal);
  const mayRun = mayRunAutonomous(deps);

  r.post('/api/autonomous/workflows', postAutonomousWorkflows, mayRun, async (req, res) => {
    // A batch can pass the ordinary 1 MB limit: read after the caller is known (api/middleware/body.ts).
    await readLargeJson(req, res);
    const created = await createAutonomousWorkflows(deps, req.auth.user, req.body);
    const rows: WorkflowRow[] = created.kind === 'single' ? [created.workflow] : created.workflows;
    const started: string[] = [];
    try {
      for (const row of rows) {
        await runs.start(row.workflowId);
        started.push(row.workflowId);
      }
    } catch (err) {
      req.log.error({ err: (err as Error).message }, 'autonomous workflow start failed');
      for (const id of started) await runs.terminate(id, 'creation rolled back').catch(() => undefined);
      if (created.kind === 'batch') await batches.delete(created.batch.batchId);
      else await workflows.delete(created.workflow.workflowId);
      throw backgroundUnavailable();
    }
    for (const row of rows)
      await writeAudit(deps, req, {
        action: 'AUTONOMOUS_WORKFLOW_CREATE',
        resourceType: 'autonomous_workflow',
        resourceId: row.workflowId,
        details: {
          project_id: row.projectId,
          cli_tool: row.cliTool,
          branch_strategy: row.branchStrategy,
          ...(row.batchId ? { batch_id: row.batchId } : {}),
        },
      });
    if (created.kind === 'single') {
      res.status(201).json(workflowView(created.workflow));
      return;
    }
    res.status(201).json({ batch: batchView(created.batch), workflows: created.workflows.map(workflowView) });
  });

  r.get('/api/autonomous/workflows', getAutonomousWorkflows, async (req, res) => {
    const q = getAutonomousWorkflows.query(req);
    const { rows, total } = await workflows.list(
      workflowListReader(req.auth.user, req.auth.permissions),
      { status: q.status, batchId: q.batch_id, projectId: q.project_id },
      { limit: q.limit, offset: q.offset },
    );
    res.json({
      workflows: rows.map(workflowView),
      total,
      limit: q.limit,
      offset: q.offset,
      project_roots: tenantProjectFolders(deps.settings, req.auth.user.tenantId),
    });
  });

  r.get('/api/autonomous/workflows/:id', getAutonomousWorkflow, async (req, res) => {
    const row = await access.workflow(req);
    const list = await milestones.list(row.workflowId);
    res.json(workflowDetailView(row, list.length));
  });

  r.get('/api/autonomous/workflows/:id/timeline', getAutonomousWorkflowsTimeline, async (req, res) => {
    const row = await access.workflow(req);
    const list = await milestones.list(row.workflowId);
    res.json({ workflow_id: row.workflowId, milestones: list.map(milestoneView) });
  });

  r.get('/api/autonomous/workflows/:id/forks', getAutonomousWorkflowsForks, async (req, res) => {
    const row = await access.workflow(req);
    const { rows } = await workflows.list(
      workflowListReader(req.auth.user, req.auth.permissions),
      { forkedFrom: row.workflowId },
      { limit: 500, offset: 0 },
    );
    res.json({ workflow_id: row.workflowId, forks: rows.map(workflowView) });
  });

  const deletion = () => autonomousDeletion({ ...deps, runs });

  r.delete('/api/autonomous/workflows/:id', deleteAutonomousWorkflows, mayRun, async (req, res) => {
    const row = await access.workflow(req);
    await deletion().deleteWorkflow(row);
    await writeAudit(deps, req, {
      action: 'AUTONOMOUS_WORKFLOW_DELETE',
      resourceType: 'autonomous_workflow',
      resourceId: row.workflowId,
      details: { status: row.status },
    });
    res.status(204).end();
  });

  r.delete('/api/autonomous/batches/:id', deleteAutonomousBatches, mayRun, async (req, res) => {
    const batch = await access.batch(req);
    const deleted = await deletion().deleteBatch(batch.batchId);
    await writeAudit(deps, req, {
      action: 'AUTONOMOUS_BATCH_DELETE',
      resourceType: 'autonomous_batch',
      resourceId: batch.batchId,
      details: { workflows: deleted.length },
    });
    res.status(204).end();
  });

  return r;
}
