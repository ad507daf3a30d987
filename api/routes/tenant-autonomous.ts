// A tenant's autonomous settings (issue 25 item 2): GET/PUT /api/tenants/:tenant_id/autonomous, on the
// tenants router (tenants.ts: a session, an administrator, and the tenant in the caller's scope: a
// tenant admin its own tenant, 403 for another). What it sets (services/autonomous/tenant-settings.ts):
//   - run_roles: the roles that may run and control autonomous workflows (a subset of tenant_admin,
//     manager, user; readonly is never allowed, platform admins always are);
//   - github_token: the token the tenant's GitHub projects use; write-only (the answer says only
//     whether one is configured and its last four characters), null removes it.
// Each change is audited (TENANT_AUTONOMOUS_SETTINGS_UPDATE, never the token itself).
import type { Request, Router } from 'express';
import { z } from 'zod';
import type { TenantRow } from '../../db/repositories/tenants.ts';
import { RUN_ROLE_CHOICES } from '../../domain/autonomous/run-permission.ts';
import { BadRequestError } from '../../domain/errors.ts';
import { tenantAutonomousSettings } from '../../services/autonomous/tenant-settings.ts';
import { writeAudit } from '../audit.ts';
import type { AppDeps } from '../deps.ts';
import { endpoint } from '../openapi/endpoint.ts';

const putBody = z
  .object({
    run_roles: z
      .array(z.enum(RUN_ROLE_CHOICES))
      .max(RUN_ROLE_CHOICES.length)
      .refine((a) => new Set(a).size === a.length, 'must not repeat a role')
      .optional(),
    github_token: z
      .string()
      .trim()
      .min(8, 'must be a GitHub token')
      .max(255)
      .regex(/^[\x21-\x7e]+$/, 'must be a GitHub token')
      .nullable()
      .optional(),
  })
  .strict();

const settingsAnswer = z.looseObject({
  tenant_id: z.number().int(),
  run_roles: z.array(z.enum(RUN_ROLE_CHOICES)),
  github_token: z.looseObject({ configured: z.boolean(), hint: z.string().nullable() }),
});

const getTenantAutonomous = endpoint({
  tags: ['tenants'],
  summary: "The tenant's autonomous settings: roles that may run workflows, GitHub token configured",
  responses: { 200: settingsAnswer },
});
const putTenantAutonomous = endpoint({
  tags: ['tenants'],
  summary: 'Set the roles that may run autonomous workflows and the GitHub token of the tenant',
  body: putBody,
  responses: { 200: settingsAnswer },
});

/** Adds the two routes to the tenants router; `tenantOf` is its scope-checked tenant lookup. */
export function mountTenantAutonomousRoutes(
  r: Router,
  deps: AppDeps,
  tenantOf: (req: Request) => Promise<TenantRow>,
) {
  const settings = tenantAutonomousSettings(deps);

  r.get('/:tenant_id/autonomous', getTenantAutonomous, async (req, res) => {
    const t = await tenantOf(req);
    res.json({ tenant_id: t.id, ...(await settings.view(t.id)) });
  });

  r.put('/:tenant_id/autonomous', putTenantAutonomous, async (req, res) => {
    const t = await tenantOf(req);
    const body = putTenantAutonomous.body(req);
    if (body.run_roles === undefined && body.github_token === undefined)
      throw new BadRequestError('Nothing to update');
    await settings.update(
      t.id,
      { runRoles: body.run_roles, githubToken: body.github_token },
      req.auth.user.id,
      deps.now(),
    );
    await writeAudit(deps, req, {
      action: 'TENANT_AUTONOMOUS_SETTINGS_UPDATE',
      resourceType: 'tenant',
      resourceId: t.id,
      targetTenantId: t.id,
      details: {
        ...(body.run_roles ? { run_roles: body.run_roles } : {}),
        ...(body.github_token === undefined
          ? {}
          : { github_token: body.github_token === null ? 'removed' : 'set' }),
      },
    });
    res.json({ tenant_id: t.id, ...(await settings.view(t.id)) });
  });
}
