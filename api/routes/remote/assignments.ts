// Machine assignments (spec document 1, "Machine management" and the authority table): assign, revoke,
// list users. A machine admin may assign only as `user` and may never revoke or demote an `admin`.
// Revoking stops the user's live sessions on the machine (services/remote-session-teardown.ts).
import { type Request, Router } from 'express';
import { z } from 'zod';
import { machineAssignmentsRepository } from '../../../db/repositories/machine-assignments.ts';
import { usersRepository } from '../../../db/repositories/users.ts';
import { isSystemAdmin } from '../../../domain/access.ts';
import { BadRequestError, ForbiddenError, NotFoundError } from '../../../domain/errors.ts';
import {
  decideAssignment,
  type MachineStanding,
  mayPerform,
  mayRevoke,
} from '../../../domain/remote-authority.ts';
import { writeAudit } from '../../../services/audit.ts';
import type { AppDeps } from '../../../services/deps.ts';
import { authenticate } from '../../middleware/auth.ts';
import { endpoint } from '../../openapi/endpoint.ts';
import { sessionTeardown } from '../../remote-session-control.ts';
import { remoteAccess } from './access.ts';

const assignBody = z.object({
  user_id: z.number().int().positive().max(2_147_483_647),
  permission: z.enum(['user', 'admin']).default('user'),
});
// Ids are 32-bit integer columns on PostgreSQL: a larger id is a 400, not a failed query.
const uidParam = z.coerce.number().int().positive().max(2_147_483_647);

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const deleteRemoteMachinesAssign = endpoint({
  tags: ['remote'],
  params: z.object({ uid: uidParam }),
  responses: { 200: z.looseObject({ success: z.literal(true), sessions_stopped: z.array(z.string()) }) },
});
const postRemoteMachinesAssign = endpoint({
  tags: ['remote'],
  body: assignBody,
  responses: {
    200: z.looseObject({
      success: z.literal(true),
      assignment: z.looseObject({
        machine_id: z.string(),
        user_id: z.number().int(),
        permission: z.string(),
        granted_by: z.number().int().nullable(),
        granted_at: z.string(),
      }),
    }),
  },
});
const getRemoteMachinesUsers = endpoint({
  tags: ['remote'],
  responses: {
    200: z.looseObject({
      machine_id: z.string(),
      users: z.array(
        z.looseObject({
          user_id: z.number().int(),
          username: z.string(),
          permission: z.string(),
          granted_at: z.string(),
        }),
      ),
    }),
  },
});

export function assignmentsRouter(deps: AppDeps): Router {
  const r = Router();
  const auth = authenticate(deps);
  const access = remoteAccess(deps);
  const assignments = machineAssignmentsRepository(deps.database);
  const users = usersRepository(deps.database);

  async function refuse(
    req: Request,
    action: string,
    machineId: string,
    reason: string,
    message: string,
  ): Promise<never> {
    await writeAudit(deps, req, {
      action,
      resourceType: 'remote_machine',
      resourceId: machineId,
      success: false,
      details: { reason },
    });
    throw new ForbiddenError(message);
  }
  const canManage = (standing: MachineStanding) => mayPerform('assign_regular_user', standing);

  r.post('/api/remote/machines/:id/assign', postRemoteMachinesAssign, auth, async (req, res) => {
    const machineId = String(req.params.id);
    const { machine, standing } = await access.visibleMachine(req, machineId);
    if (!canManage(standing))
      await refuse(
        req,
        'REMOTE_MACHINE_ASSIGN',
        machineId,
        'not_machine_admin',
        'Machine administrator access required',
      );
    const body = postRemoteMachinesAssign.body(req);
    const decision = decideAssignment(standing, body.permission);
    if (!decision.allowed)
      return refuse(
        req,
        'REMOTE_MACHINE_ASSIGN',
        machineId,
        'not_machine_admin',
        'Machine administrator access required',
      );
    const target = await users.findById(body.user_id);
    // Tenant isolation covers machine permissions: no assignment across tenants. Another tenant's user
    // answers exactly as a missing one, so a machine admin cannot probe which ids exist elsewhere.
    const foreign =
      target?.tenantId != null && machine.tenantId != null && target.tenantId !== machine.tenantId;
    if (!target || target.deletedAt || foreign) throw new BadRequestError('Unknown user_id');
    const existing = await assignments.find(machineId, body.user_id);
    // Re-assigning an admin as `user` would demote it, which only a system admin may do.
    if (existing?.permission === 'admin' && decision.stored !== 'admin' && !mayRevoke(standing, 'admin'))
      await refuse(
        req,
        'REMOTE_MACHINE_ASSIGN',
        machineId,
        'cannot_demote_admin',
        'A machine administrator cannot change an admin assignment',
      );
    const row = await assignments.upsert({
      machineId,
      userId: body.user_id,
      permission: decision.stored,
      grantedBy: req.auth.user.id,
      grantedAt: deps.now(),
    });
    await writeAudit(deps, req, {
      action: 'REMOTE_MACHINE_ASSIGN',
      resourceType: 'remote_machine',
      resourceId: machineId,
      targetTenantId: machine.tenantId,
      details: { user_id: body.user_id, requested: body.permission, stored: decision.stored },
    });
    res.json({
      success: true,
      assignment: {
        machine_id: machineId,
        user_id: row.userId,
        permission: row.permission,
        granted_by: row.grantedBy,
        granted_at: row.grantedAt.toISOString(),
      },
    });
  });

  r.delete('/api/remote/machines/:id/assign/:uid', deleteRemoteMachinesAssign, auth, async (req, res) => {
    const machineId = String(req.params.id);
    const userId = deleteRemoteMachinesAssign.params(req).uid;
    const { machine, standing } = await access.visibleMachine(req, machineId);
    if (!canManage(standing))
      await refuse(
        req,
        'REMOTE_MACHINE_REVOKE',
        machineId,
        'not_machine_admin',
        'Machine administrator access required',
      );
    const existing = await assignments.find(machineId, userId);
    if (!existing) throw new NotFoundError('Assignment not found');
    if (!mayRevoke(standing, existing.permission === 'admin' ? 'admin' : 'user'))
      await refuse(
        req,
        'REMOTE_MACHINE_REVOKE',
        machineId,
        'cannot_revoke_admin',
        'A machine administrator cannot revoke an admin user',
      );
    // The assignment goes first, so no new session can be created while the running ones are stopped.
    await assignments.delete(machineId, userId);
    // A system administrator's authority does not come from the assignment: its sessions stay.
    const target = await users.findById(userId);
    const stopped =
      target && isSystemAdmin(target)
        ? []
        : await sessionTeardown(deps, req).stopMatching({ machineId, userId }, 'assignment_revoked');
    await writeAudit(deps, req, {
      action: 'REMOTE_MACHINE_REVOKE',
      resourceType: 'remote_machine',
      resourceId: machineId,
      targetTenantId: machine.tenantId,
      details: { user_id: userId, permission: existing.permission, sessions_stopped: stopped.length },
    });
    res.json({ success: true, sessions_stopped: stopped.map((s) => s.sessionId) });
  });

  r.get('/api/remote/machines/:id/users', getRemoteMachinesUsers, auth, async (req, res) => {
    const machineId = String(req.params.id);
    const { standing } = await access.visibleMachine(req, machineId);
    if (!mayPerform('list_machine_users', standing))
      throw new ForbiddenError('Machine administrator access required');
    const rows = await assignments.listForMachine(machineId);
    res.json({
      machine_id: machineId,
      users: rows.map((u) => ({
        user_id: u.userId,
        username: u.username,
        email: u.email,
        role: u.role,
        permission: u.permission,
        granted_by: u.grantedBy,
        granted_at: u.grantedAt.toISOString(),
      })),
    });
  });

  return r;
}
