// Organization sync from the chat platforms (spec document 2, Administration table; "Organization sync
// and alert webhooks" items 1-3; issue 12 item 4):
//
//   POST /api/admin/chatplat_a/sync   optional {tenant_id: integer}, default chatplat_a.org_sync_tenant_id
//   POST /api/admin/chatplat_b/sync   same, default chatplat_b.org_sync_tenant_id
//        202 {run_id, platform, tenant_id}: an orgSyncWorkflow was started (workflows/orgsync/sync.ts)
//   GET  /api/admin/<platform>/sync/<run_id>   the run's status and counts (org_sync_runs)
//
// Admin only (403 otherwise). A tenant admin may sync only their own tenant (403 "Cross-tenant access
// denied", also when the configured default names another tenant); a system admin any existing one.
// 400 for a tenant_id that is not a positive integer or names no live tenant; 409 when the platform
// is not configured (app_key/app_secret missing) or a run of the platform for that tenant is still
// going. Every start is audited (ORG_SYNC_STARTED). The app secret never appears in an answer.
import { randomBytes } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/common';
import { type Request, Router } from 'express';
import { z } from 'zod';
import { orgSyncRunsRepository } from '../../db/repositories/orgsync/runs.ts';
import { tenantsRepository } from '../../db/repositories/tenants.ts';
import { isSystemAdmin } from '../../domain/access.ts';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../../domain/errors.ts';
import { PLATFORMS, type Platform } from '../../domain/orgsync/platform.ts';
import { inScope, parseTenantIdParam, readScope, TENANT_KEY_ERRORS } from '../../domain/tenant-scope.ts';
import { writeAudit } from '../../services/audit.ts';
import type { AppDeps } from '../../services/deps.ts';
import { platformCredentials } from '../../services/orgsync/directories.ts';
import { backgroundUnavailable, isTemporalUnavailable } from '../../services/temporal-unavailable.ts';
import { ORG_SYNC_ID_PREFIX, orgSyncWorkflow } from '../../workflows/orgsync/sync.ts';
import { iso } from '../json-dates.ts';
import { authenticate, requireAdmin } from '../middleware/auth.ts';
import { endpoint } from '../openapi/endpoint.ts';

const syncBody = z.object({ tenant_id: z.unknown().optional() }).strict();

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const startSync = endpoint({
  tags: ['orgsync'],
  summary: "Start an organization sync from the platform (default tenant: the platform's org_sync_tenant_id)",
  body: syncBody,
  responses: {
    202: z.object({ run_id: z.string(), platform: z.string(), tenant_id: z.number().int() }),
  },
  errors: [409],
});
const syncStatus = endpoint({
  tags: ['orgsync'],
  summary: "An organization sync run's status and counts",
  responses: {
    200: z.looseObject({
      run_id: z.string(),
      platform: z.string(),
      tenant_id: z.number().int().nullable(),
      status: z.string(),
      started_at: z.string().nullable(),
      finished_at: z.string().nullable(),
      counts: z.unknown(),
      error: z.string().nullable(),
    }),
  },
});
const RUN_ID_SHAPE = /^[A-Za-z0-9_:.-]{1,100}$/;

export const orgSyncWorkflowId = (platform: Platform, tenantId: number) =>
  `${ORG_SYNC_ID_PREFIX}${platform}-t${tenantId}-${randomBytes(8).toString('hex')}`;

export function orgSyncRouter(deps: AppDeps): Router {
  const r = Router();
  const admin = [authenticate(deps), requireAdmin];
  const runs = () => orgSyncRunsRepository(deps.database);

  /** The tenant of the run: validated, in the caller's reach, existing. */
  const targetTenant = async (req: Request, platform: Platform): Promise<number> => {
    const body = startSync.body(req);
    const raw = body.tenant_id;
    const given =
      typeof raw === 'number' || raw === undefined || raw === null ? parseTenantIdParam(raw) : 'invalid';
    if (given === 'invalid') throw new BadRequestError(TENANT_KEY_ERRORS.invalid);
    const tenantId = given ?? deps.settings[platform].org_sync_tenant_id;
    const actor = req.auth.user;
    if (!isSystemAdmin(actor)) {
      if (actor.tenantId == null) throw new ForbiddenError(TENANT_KEY_ERRORS.adminWithoutTenant);
      if (tenantId !== actor.tenantId) throw new ForbiddenError(TENANT_KEY_ERRORS.crossTenant);
    }
    if (!(await tenantsRepository(deps.database).findById(tenantId)))
      throw new BadRequestError(`Unknown tenant_id: ${tenantId}`);
    return tenantId;
  };

  /** 409 while a run of the platform for the tenant is still going; a stale `running` row is closed. */
  const refuseConcurrent = async (platform: Platform, tenantId: number) => {
    const running = await runs().latestRunning(platform, tenantId);
    if (!running) return;
    let open = false;
    try {
      const client = await deps.temporal.client();
      const described = await client.workflow.getHandle(running.runId).describe();
      open = described.status.name === 'RUNNING';
    } catch (err) {
      // A missing namespace also arrives as a WorkflowNotFoundError: unavailable, not a finished run.
      if (!(err instanceof WorkflowNotFoundError) || isTemporalUnavailable(err)) {
        deps.logger.error({ err }, 'org sync: Temporal call failed');
        throw backgroundUnavailable();
      }
    }
    if (open)
      throw new ConflictError(
        `An org sync of ${platform} for tenant ${tenantId} is already running (${running.runId})`,
      );
    await runs().finish(
      running.runId,
      { status: 'failed', counts: null, error: 'the run ended without closing' },
      deps.now(),
    );
  };

  for (const platform of PLATFORMS) {
    r.post(`/api/admin/${platform}/sync`, startSync, ...admin, async (req, res) => {
      const tenantId = await targetTenant(req, platform);
      if (!platformCredentials(deps.settings, platform))
        throw new ConflictError(
          `${platform} is not configured: set ${platform}.app_key and ${platform}.app_secret`,
        );
      await refuseConcurrent(platform, tenantId);
      const runId = orgSyncWorkflowId(platform, tenantId);
      await runs().start({ runId, platform, tenantId }, deps.now());
      try {
        const client = await deps.temporal.client();
        await client.workflow.start(orgSyncWorkflow, {
          workflowId: runId,
          taskQueue: deps.temporal.taskQueue,
          args: [{ platform, tenantId }],
        });
      } catch (err) {
        deps.logger.error({ err }, 'org sync: cannot start the workflow');
        await runs().finish(
          runId,
          { status: 'failed', counts: null, error: 'the workflow could not be started' },
          deps.now(),
        );
        throw backgroundUnavailable();
      }
      await writeAudit(deps, req, {
        action: 'ORG_SYNC_STARTED',
        resourceType: 'org_sync',
        resourceId: runId,
        details: { platform, tenant_id: tenantId },
        targetTenantId: tenantId,
      });
      res.status(202).json({ run_id: runId, platform, tenant_id: tenantId });
    });

    r.get(`/api/admin/${platform}/sync/:run_id`, syncStatus, ...admin, async (req, res) => {
      const runId = String(req.params.run_id);
      const run = RUN_ID_SHAPE.test(runId) ? await runs().find(runId) : undefined;
      if (!run || run.platform !== platform || !inScope(readScope(req.auth.user), run.tenantId))
        throw new NotFoundError('Sync run not found');
      res.json({
        run_id: run.runId,
        platform: run.platform,
        tenant_id: run.tenantId,
        status: run.status,
        started_at: iso(run.startedAt),
        finished_at: iso(run.finishedAt),
        counts: run.counts,
        error: run.error,
      });
    });
  }
  return r;
}
