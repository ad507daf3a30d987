// Who may touch an autonomous workflow or batch through the API (spec document 2, "Autonomous
// development": the owner or an administrator). The rule itself is domain/autonomous/access.ts
// `workflowAccess`; this file only loads the row and turns the decision into the API's errors:
// unknown or outside the caller's tenant scope -> 404, someone else's in scope -> 403. Path ids are
// validated first (400): workflow ids look like `aw-<uuid>`, batch ids `ab-<uuid>`, milestones are
// positive integers. Running and controlling (every route that is not a read) needs more: the caller's
// role must be allowed to run workflows in its tenant (mayRun: 403 saying who may enable it; domain/
// autonomous/run-permission.ts), checked before any row is read.
import type { Request, RequestHandler } from 'express';
import { z } from 'zod';
import { batchesRepository } from '../../../db/repositories/autonomous/batches.ts';
import { milestonesRepository } from '../../../db/repositories/autonomous/milestones.ts';
import { type WorkflowRow, workflowsRepository } from '../../../db/repositories/autonomous/workflows.ts';
import { workflowAccess } from '../../../domain/autonomous/access.ts';
import { ForbiddenError, NotFoundError } from '../../../domain/errors.ts';
import { parseInput } from '../../../domain/validation.ts';
import { assertMayRunAutonomous } from '../../../services/autonomous/tenant-settings.ts';
import type { AppDeps } from '../../../services/deps.ts';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
export const WORKFLOW_ID = new RegExp(`^aw-${UUID}$`);
export const BATCH_ID = new RegExp(`^ab-${UUID}$`);

const workflowParams = z.object({
  id: z.string().max(64).regex(WORKFLOW_ID, 'must be a workflow id (aw-<uuid>)'),
});
const milestoneParams = workflowParams.extend({
  mid: z.coerce.number().int().min(1).max(2_147_483_647),
});
const batchParams = z.object({ id: z.string().max(64).regex(BATCH_ID, 'must be a batch id (ab-<uuid>)') });

/** The path parameters as this module parses them, for the routes' declarations (the API document). */
export const AUTONOMOUS_PARAMS = { workflow: workflowParams, milestone: milestoneParams, batch: batchParams };

export const WORKFLOW_NOT_FOUND = 'Autonomous workflow not found';
export const MILESTONE_NOT_FOUND = 'Milestone not found';

function decide(req: Request, row: { userId: number; tenantId: number | null } | undefined, what: string) {
  switch (workflowAccess(req.auth.user, req.auth.permissions, row)) {
    case 'ok':
      return;
    case 'forbidden':
      throw new ForbiddenError(`Only the owner or an administrator may access this ${what}`);
    case 'not_found':
      throw new NotFoundError(what === 'batch' ? 'Batch not found' : WORKFLOW_NOT_FOUND);
  }
}

/** Route guard of creating, controlling, forking and deleting workflows (not of reads). */
export function mayRunAutonomous(deps: AppDeps): RequestHandler {
  return (req, _res, next) => {
    assertMayRunAutonomous(deps.database, req.auth.user).then(() => next(), next);
  };
}

export function autonomousAccess(deps: AppDeps) {
  const workflows = workflowsRepository(deps.database);
  const milestones = milestonesRepository(deps.database);
  const batches = batchesRepository(deps.database);

  async function workflow(req: Request): Promise<WorkflowRow> {
    const { id } = parseInput(workflowParams, req.params);
    const row = await workflows.find(id);
    decide(req, row, 'workflow');
    return row!;
  }

  return {
    workflow,

    /** The workflow and one of its milestones (404 when the milestone is not the workflow's). */
    async milestone(req: Request) {
      const { mid } = parseInput(milestoneParams, req.params);
      const row = await workflow(req);
      const milestone = await milestones.find(row.workflowId, mid);
      if (!milestone) throw new NotFoundError(MILESTONE_NOT_FOUND);
      return { workflow: row, milestone };
    },

    async batch(req: Request) {
      const { id } = parseInput(batchParams, req.params);
      const row = await batches.find(id);
      decide(req, row, 'batch');
      return row!;
    },
  };
}

export type AutonomousAccess = ReturnType<typeof autonomousAccess>;
