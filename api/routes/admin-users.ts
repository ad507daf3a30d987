// Administration: /api/admin/users* (document 2, "Administration"). Changes are for administrators
// only; a tenant admin manages only users of its own tenant and never a system administrator. Every
// change is audited. The list is also open to holders of `view_users` (managers: the spec's manager
// permission set), read-only and inside their own tenant like every non-system-admin read.
import { type Request, Router } from 'express';
import { z } from 'zod';
import { authSessionsRepository } from '../../db/repositories/auth-sessions.ts';
import { tenantsRepository } from '../../db/repositories/tenants.ts';
import { type UserPatch, type UserRow, usersRepository } from '../../db/repositories/users.ts';
import { isUniqueViolation } from '../../db/unique-violation.ts';
import { canAssignRole, isSystemAdmin, userManagementRefusal } from '../../domain/access.ts';
import { BadRequestError, ForbiddenError, NotFoundError } from '../../domain/errors.ts';
import { passwordPolicy, passwordProblem } from '../../domain/password-policy.ts';
import { hashPassword } from '../../domain/passwords.ts';
import { ROLES } from '../../domain/permissions.ts';
import { MAX_USER_TOKEN_QUOTA_MILLIONS } from '../../domain/quota.ts';
import { parseTenantIdParam, readScope } from '../../domain/tenant-scope.ts';
import { DEFAULT_TENANT_ID } from '../../domain/tenants.ts';
import { parseInput } from '../../domain/validation.ts';
import { securitySettings } from '../../services/access-caches.ts';
import { writeAudit } from '../../services/audit.ts';
import type { AppDeps } from '../../services/deps.ts';
import { iso } from '../json-dates.ts';
import { authenticate, requireAdmin, requirePermission } from '../middleware/auth.ts';
import { endpoint } from '../openapi/endpoint.ts';

const username = z
  .string()
  .trim()
  .regex(/^[\p{L}\p{N}._@-]{1,100}$/u, 'must be 1-100 letters, digits or . _ @ -');
const email = z
  .union([z.email(), z.literal('')])
  .nullish()
  .transform((v) => (v ? v : null));
const role = z.enum(ROLES);
const tenantIdField = z.union([z.number(), z.string()]).nullish();
const quotaValue = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).nullable().optional();
// Token quotas are in millions: at most what stays an exact integer once multiplied (domain/quota.ts).
const tokenQuotaValue = z.number().int().min(0).max(MAX_USER_TOKEN_QUOTA_MILLIONS).nullable().optional();

const createBody = z.object({
  username,
  email,
  password: z.string().min(1),
  role: role.default('user'),
  tenant_id: tenantIdField,
  must_change_password: z.boolean().optional(),
  linux_account: z.string().max(255).nullish(),
});
const updateBody = z
  .object({
    username: username.optional(),
    email: email.optional(),
    role: role.optional(),
    is_active: z.boolean().optional(),
    linux_account: z.string().max(255).nullish(),
    tenant_id: tenantIdField,
    must_change_password: z.boolean().optional(),
  })
  .strict();
const passwordBody = z.object({ password: z.string().min(1), must_change_password: z.boolean().optional() });
const quotaBody = z
  .object({
    daily_token_quota: tokenQuotaValue,
    monthly_token_quota: tokenQuotaValue,
    daily_request_quota: quotaValue,
    monthly_request_quota: quotaValue,
  })
  .strict();
// Ids are 32-bit integer columns on PostgreSQL: a larger id is a 400, not a failed query.
const idParam = z.object({ user_id: z.coerce.number().int().positive().max(2_147_483_647) });

// Declarations of each route (validation + /api/openapi.json; api/openapi/endpoint.ts).
const quotaField = z.number().int().nullable();
const userSchema = z.object({
  id: z.number().int(),
  username: z.string(),
  email: z.string().nullable(),
  role: z.string(),
  is_active: z.boolean(),
  created_at: z.string().nullable(),
  tenant_id: z.number().int().nullable(),
  must_change_password: z.boolean(),
  linux_account: z.string().nullable(),
  last_login_at: z.string().nullable(),
  daily_token_quota: quotaField,
  monthly_token_quota: quotaField,
  daily_request_quota: quotaField,
  monthly_request_quota: quotaField,
});
const success = z.object({ success: z.literal(true) });
const tags = ['admin-users'];
const listUsers = endpoint({
  tags,
  summary: "Users the caller may see (needs view_users; a tenant admin or manager: its own tenant's)",
  responses: { 200: z.object({ users: z.array(userSchema) }) },
});
const createUser = endpoint({
  tags,
  summary: 'Create a user',
  body: createBody,
  responses: { 201: z.object({ success: z.literal(true), user_id: z.number().int() }) },
  errors: [409],
});
const updateUser = endpoint({
  tags,
  summary: 'Update a user (absent ids: 404 to system admins, 403 to anyone else)',
  params: idParam,
  body: updateBody,
  responses: { 200: z.object({ success: z.literal(true), user: userSchema }) },
  errors: [409],
});
const deleteUser = endpoint({ tags, summary: 'Delete a user', params: idParam, responses: { 200: success } });
const resetPassword = endpoint({
  tags,
  summary: "Reset a user's password (the user's sessions end)",
  params: idParam,
  body: passwordBody,
  responses: { 200: z.object({ success: z.literal(true), message: z.string() }) },
});
const setQuota = endpoint({
  tags,
  summary: "Set a user's token quotas (millions) and request quotas",
  params: idParam,
  body: quotaBody,
  responses: { 200: z.object({ success: z.literal(true), user: userSchema }) },
});

export const userView = (u: UserRow) => ({
  id: u.id,
  username: u.username,
  email: u.email,
  role: u.role,
  is_active: u.isActive,
  created_at: iso(u.createdAt),
  tenant_id: u.tenantId,
  must_change_password: u.mustChangePassword,
  linux_account: u.systemAccount,
  last_login_at: iso(u.lastLoginAt),
  daily_token_quota: u.dailyTokenQuota,
  monthly_token_quota: u.monthlyTokenQuota,
  daily_request_quota: u.dailyRequestQuota,
  monthly_request_quota: u.monthlyRequestQuota,
});

export function adminUsersRouter(deps: AppDeps): Router {
  const r = Router();
  const users = () => usersRepository(deps.database);
  r.use(authenticate(deps));
  // Before the administrator guard below: reading the list needs `view_users` only.
  r.get('/', listUsers, requirePermission('view_users'), async (req, res) => {
    const rows = await users().list(readScope(req.auth.user));
    res.json({ users: rows.map(userView) });
  });
  r.use(requireAdmin);
  const tenants = () => tenantsRepository(deps.database);

  const policyCheck = async (name: string, password: string) => {
    const problem = passwordProblem(
      passwordPolicy((await securitySettings(deps)).password_min_length),
      name,
      password,
    );
    if (problem) throw new BadRequestError(problem);
  };

  /**
   * The target user, if the caller may manage it: 403 when out of reach. Absent ids answer 404 only to
   * system administrators; anyone else gets the same 403 as for another tenant's user, so ids cannot
   * be probed across tenants.
   */
  const manageable = async (req: Request) => {
    const { user_id } = parseInput(idParam, req.params);
    const target = await users().findById(user_id);
    if (!target) {
      if (isSystemAdmin(req.auth.user)) throw new NotFoundError('User not found');
      throw new ForbiddenError('Cross-tenant access denied');
    }
    const refusal = userManagementRefusal(req.auth.user, target);
    if (refusal) throw new ForbiddenError(refusal);
    return target;
  };

  /** A tenant the caller may place a user in (tenant admins: only their own). */
  const targetTenant = async (req: Request, raw: unknown): Promise<number | null> => {
    const actor = req.auth.user;
    const given = parseTenantIdParam(raw);
    if (given === 'invalid') throw new BadRequestError('Invalid tenant_id');
    if (!isSystemAdmin(actor)) {
      if (actor.tenantId == null) throw new ForbiddenError('Tenant admin must have tenant_id');
      if (given !== undefined && given !== actor.tenantId)
        throw new ForbiddenError('Cross-tenant access denied');
      return actor.tenantId;
    }
    if (given === undefined) return raw === null ? null : DEFAULT_TENANT_ID;
    if (!(await tenants().findById(given))) throw new BadRequestError('Tenant not found');
    return given;
  };

  r.post('/', createUser, async (req, res) => {
    const body = createUser.body(req);
    if (!canAssignRole(req.auth.user, body.role))
      throw new ForbiddenError('Only a system administrator can grant this role');
    await policyCheck(body.username, body.password);
    // A platform admin without an explicit tenant is global; other new users join the default tenant.
    const tenantId =
      body.role === 'platform_admin' && body.tenant_id === undefined
        ? null
        : await targetTenant(req, body.tenant_id);
    if (tenantId != null) {
      const quota = await tenants().quotaOf(tenantId);
      if (quota && (await users().countInTenant(tenantId)) >= quota.maxUsers)
        throw new BadRequestError(`Tenant user limit reached (${quota.maxUsers})`);
    }
    if (await users().usernameTaken(body.username)) throw new BadRequestError('Username already exists');
    const now = deps.now();
    let created: UserRow;
    try {
      created = await users().create({
        username: body.username,
        email: body.email,
        passwordHash: await hashPassword(body.password),
        role: body.role,
        isAdmin: isSystemAdmin({ role: body.role }),
        tenantId,
        mustChangePassword: body.must_change_password ?? false,
        systemAccount: body.linux_account ?? null,
        createdAt: now,
        updatedAt: now,
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new BadRequestError('Username already exists');
      throw err;
    }
    await writeAudit(deps, req, {
      action: 'USER_CREATE',
      resourceType: 'user',
      resourceId: created.id,
      targetTenantId: tenantId,
      details: { username: created.username, role: created.role, tenant_id: tenantId },
    });
    res.status(201).json({ success: true, user_id: created.id });
  });

  r.put('/:user_id', updateUser, async (req, res) => {
    const target = await manageable(req);
    const body = updateUser.body(req);
    const self = target.id === req.auth.user.id;
    const patch: UserPatch = {};
    if (body.username !== undefined && body.username !== target.username) {
      if (await users().usernameTaken(body.username, target.id))
        throw new BadRequestError('Username already exists');
      patch.username = body.username;
    }
    if (body.email !== undefined) patch.email = body.email;
    if (body.role !== undefined && body.role !== target.role) {
      if (self) throw new BadRequestError('You cannot change your own role');
      if (!canAssignRole(req.auth.user, body.role))
        throw new ForbiddenError('Only a system administrator can grant this role');
      patch.role = body.role;
      patch.isAdmin = isSystemAdmin({ role: body.role });
    }
    if (body.is_active !== undefined) {
      if (self && !body.is_active) throw new BadRequestError('You cannot deactivate your own account');
      patch.isActive = body.is_active;
    }
    if (body.linux_account !== undefined) patch.systemAccount = body.linux_account;
    if (body.must_change_password !== undefined) patch.mustChangePassword = body.must_change_password;
    if (body.tenant_id !== undefined) {
      const tenantId = await targetTenant(req, body.tenant_id);
      if (tenantId !== target.tenantId) patch.tenantId = tenantId;
    }
    if (!Object.keys(patch).length && !Object.keys(body).length)
      throw new BadRequestError('Nothing to update');
    try {
      await users().update(target.id, patch, deps.now());
    } catch (err) {
      if (isUniqueViolation(err)) throw new BadRequestError('Username already exists');
      throw err;
    }
    if (patch.isActive === false) await authSessionsRepository(deps.database).deactivateAllForUser(target.id);
    await writeAudit(deps, req, {
      action: 'USER_UPDATE',
      resourceType: 'user',
      resourceId: target.id,
      targetTenantId: target.tenantId,
      details: { username: target.username, changed: Object.keys(patch) },
    });
    res.json({ success: true, user: userView({ ...target, ...patch } as UserRow) });
  });

  r.delete('/:user_id', deleteUser, async (req, res) => {
    const { user_id } = deleteUser.params(req);
    if (user_id === req.auth.user.id) throw new BadRequestError('You cannot delete your own account');
    const target = await manageable(req);
    await users().softDelete(target.id, deps.now());
    await authSessionsRepository(deps.database).deactivateAllForUser(target.id);
    await writeAudit(deps, req, {
      action: 'USER_DELETE',
      resourceType: 'user',
      resourceId: target.id,
      targetTenantId: target.tenantId,
      severity: 'warning',
      details: { username: target.username },
    });
    res.json({ success: true });
  });

  r.put('/:user_id/password', resetPassword, async (req, res) => {
    const target = await manageable(req);
    const body = resetPassword.body(req);
    await policyCheck(target.username, body.password);
    await users().setPassword(
      target.id,
      await hashPassword(body.password),
      body.must_change_password ?? true,
      deps.now(),
    );
    // The old password's sessions end (the caller's own stays when resetting itself).
    await authSessionsRepository(deps.database).deactivateAllForUser(
      target.id,
      target.id === req.auth.user.id ? req.auth.sessionId : undefined,
    );
    await writeAudit(deps, req, {
      action: 'USER_PASSWORD_RESET',
      resourceType: 'user',
      resourceId: target.id,
      targetTenantId: target.tenantId,
      details: { username: target.username },
    });
    res.json({ success: true, message: 'Password reset' });
  });

  r.put('/:user_id/quota', setQuota, async (req, res) => {
    const target = await manageable(req);
    const body = setQuota.body(req);
    const quota = {
      dailyTokenQuota: body.daily_token_quota,
      monthlyTokenQuota: body.monthly_token_quota,
      dailyRequestQuota: body.daily_request_quota,
      monthlyRequestQuota: body.monthly_request_quota,
    };
    const set = Object.fromEntries(Object.entries(quota).filter(([, v]) => v !== undefined));
    if (!Object.keys(set).length) throw new BadRequestError('Nothing to update');
    await users().setQuota(target.id, set, deps.now());
    await writeAudit(deps, req, {
      action: 'USER_QUOTA_UPDATE',
      resourceType: 'user',
      resourceId: target.id,
      targetTenantId: target.tenantId,
      details: { username: target.username, ...body },
    });
    const updated = await users().findById(target.id);
    res.json({ success: true, user: userView(updated!) });
  });

  return r;
}
