// A tenant's autonomous settings (issue 25 item 2): GET/PUT /api/tenants/:tenant_id/autonomous, with the
// tenants router's rules (tenants.ts): a session, an administrator, and the tenant in the caller's
// scope (a tenant admin its own tenant, 403 for another; 404 unknown). Mounted before the tenants
// router (api/routes/index.ts). What it sets (services/autonomous/tenant-settings.ts):
//   - run_roles: the roles that may run and control autonomous workflows (a subset of tenant_admin,
//     manager, user; readonly is never allowed, platform admins always are);
//   - github_token: the token the tenant's GitHub projects use; write-only (the answer says only
//     whether one is configured and its last four characters), null removes it.
// Each change is audited (TENANT_AUTONOMOUS_SETTINGS_UPDATE, never the token itself).
import { type Request, Router } from 'express';
import { z } from 'zod';
import { tenantsRepository } from '../../db/repositories/tenants.ts';
import { RUN_ROLE_CHOICES } from '../../domain/autonomous/run-permission.ts';
import { BadRequestError, ForbiddenError, NotFoundError } from '../../domain/errors.ts';
import { inScope, readScope } from '../../domain/tenant-scope.ts';
import { parseInput } from '../../domain/validation.ts';
import { writeAudit } from '../../services/audit.ts';
import { tenantAutonomousSettings } from '../../services/autonomous/tenant-settings.ts';
import type { AppDeps } from '../../services/deps.ts';
import { authenticate, requireAdmin } from '../middleware/auth.ts';
import { endpoint } from '../openapi/endpoint.ts';

const PATH = '/api/tenants/:tenant_id/autonomous';
const idParam = z.object({ tenant_id: z.coerce.number().int().positive().max(2_147_483_647) });

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

export function tenantAutonomousRouter(deps: AppDeps): Router {
  const r = Router();
  r.use(PATH, authenticate(deps), requireAdmin);
  const settings = tenantAutonomousSettings(deps);

  /** The tenant, if the caller may see it (the tenants router's rule, tenants.ts `visible`). */
  const tenantOf = async (req: Request) => {
    const { tenant_id } = parseInput(idParam, req.params);
    if (!inScope(readScope(req.auth.user), tenant_id)) throw new ForbiddenError('Cross-tenant access denied');
    const t = await tenantsRepository(deps.database).findById(tenant_id);
    if (!t) throw new NotFoundError('Tenant not found');
    return t;
  };

  r.get(PATH, getTenantAutonomous, async (req, res) => {
    const t = await tenantOf(req);
    res.json({ tenant_id: t.id, ...(await settings.view(t.id)) });
  });

  r.put(PATH, putTenantAutonomous, async (req, res) => {
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
  return r;
}
