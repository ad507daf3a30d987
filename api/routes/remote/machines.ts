// Machine management (spec document 1, "Machine management"): registration tokens, listings, detail,
// unregistering, and the reserved browse endpoint. Assignments live in assignments.ts.
import { type Request, Router } from 'express';
import { z } from 'zod';
import { machineAssignmentsRepository } from '../../../db/repositories/machine-assignments.ts';
import { registrationTokensRepository } from '../../../db/repositories/registration-tokens.ts';
import { remoteMachinesRepository } from '../../../db/repositories/remote-machines.ts';
import { remoteSessionsRepository } from '../../../db/repositories/remote-sessions.ts';
import { tenantsRepository } from '../../../db/repositories/tenants.ts';
import { isSystemAdmin } from '../../../domain/access.ts';
import {
  BadRequestError,
  ForbiddenError,
  NotFoundError,
  NotImplementedError,
} from '../../../domain/errors.ts';
import { machineStatus } from '../../../domain/machine-status.ts';
import {
  isMachinePermission,
  machineStanding,
  mayPerform,
  type RemoteAction,
} from '../../../domain/remote-authority.ts';
import { hashRemoteSecret, newRemoteSecret } from '../../../domain/remote-tokens.ts';
import { writeAudit } from '../../audit.ts';
import type { AppDeps } from '../../deps.ts';
import { authenticate } from '../../middleware/auth.ts';
import { parseInput } from '../../middleware/validate.ts';
import { remoteSessionControl } from '../../remote-session-control.ts';
import { MACHINE_NOT_FOUND, remoteAccess } from './access.ts';
import { machineView } from './views.ts';

const registerBody = z.object({ tenant_id: z.number().int().positive().max(2_147_483_647) });

export function machinesRouter(deps: AppDeps): Router {
  const r = Router();
  const auth = authenticate(deps);
  const access = remoteAccess(deps);
  const machines = remoteMachinesRepository(deps.database);
  const assignments = machineAssignmentsRepository(deps.database);
  const tokens = registrationTokensRepository(deps.database);
  const control = remoteSessionControl(deps.temporal);

  /** System-admin-only actions: refused with 403 and an audit record for anyone else. */
  async function requireGlobal(
    req: Request,
    action: RemoteAction,
    audit: { action: string; resourceId?: string },
  ) {
    if (mayPerform(action, machineStanding(req.auth.user, null))) return;
    await writeAudit(deps, req, {
      action: audit.action,
      resourceType: 'remote_machine',
      resourceId: audit.resourceId,
      success: false,
      details: { reason: 'forbidden' },
    });
    throw new ForbiddenError('System administrator access required');
  }

  r.post('/api/remote/machines/register', auth, async (req, res) => {
    await requireGlobal(req, 'generate_registration_token', { action: 'REMOTE_REGISTRATION_TOKEN_CREATE' });
    const body = parseInput(registerBody, req.body);
    const tenant = await tenantsRepository(deps.database).findById(body.tenant_id);
    if (!tenant) throw new BadRequestError('Unknown tenant_id');
    const token = newRemoteSecret();
    const now = deps.now();
    const row = await tokens.create({
      tokenHash: hashRemoteSecret(token),
      tenantId: body.tenant_id,
      createdBy: req.auth.user.id,
      createdAt: now,
      expiresAt: null,
    });
    await writeAudit(deps, req, {
      action: 'REMOTE_REGISTRATION_TOKEN_CREATE',
      resourceType: 'registration_token',
      resourceId: row.id,
      targetTenantId: body.tenant_id,
    });
    res.status(201).json({ registration_token: token, tenant_id: body.tenant_id });
  });

  r.get('/api/remote/machines', auth, async (req, res) => {
    res.json({ machines: await visibleMachines(req, false) });
  });

  r.get('/api/remote/machines/available', auth, async (req, res) => {
    res.json({ machines: await visibleMachines(req, true) });
  });

  /** System admins see every machine; everyone else the machines assigned to them, with their permission. */
  async function visibleMachines(req: Request, onlineOnly: boolean) {
    const now = deps.now();
    const online = (m: { lastHeartbeat: Date | null }) =>
      !onlineOnly || machineStatus(m.lastHeartbeat, now) === 'online';
    if (isSystemAdmin(req.auth.user))
      return (await machines.listAll()).filter(online).map((m) => machineView(m, now));
    const mine = await assignments.listForUser(req.auth.user.id);
    const permissionOf = new Map(mine.map((a) => [a.machineId, a.permission]));
    return (await machines.listByIds([...permissionOf.keys()])).filter(online).map((m) => {
      const p = permissionOf.get(m.machineId);
      return machineView(m, now, isMachinePermission(p) ? p : 'user');
    });
  }

  r.get('/api/remote/machines/:id', auth, async (req, res) => {
    const { machine, permission } = await access.visibleMachine(req, String(req.params.id));
    res.json(
      machineView(machine, deps.now(), isSystemAdmin(req.auth.user) ? undefined : (permission ?? undefined)),
    );
  });

  r.delete('/api/remote/machines/:id', auth, async (req, res) => {
    const machineId = String(req.params.id);
    await requireGlobal(req, 'unregister_machine', {
      action: 'REMOTE_MACHINE_DELETE',
      resourceId: machineId,
    });
    const machine = await machines.find(machineId);
    if (!machine) throw new NotFoundError(MACHINE_NOT_FOUND);
    // Sessions on the machine end with it (their proxy tokens are revoked by the workflow).
    const live = await remoteSessionsRepository(deps.database).listLiveOnMachine(machineId);
    for (const s of live) {
      await control
        .ended(s.sessionId, { reason: 'machine_removed' })
        .catch((err) =>
          req.log.warn({ err, session_id: s.sessionId }, 'could not end session of removed machine'),
        );
    }
    await machines.delete(machineId);
    await writeAudit(deps, req, {
      action: 'REMOTE_MACHINE_DELETE',
      resourceType: 'remote_machine',
      resourceId: machineId,
      targetTenantId: machine.tenantId,
      details: { machine_name: machine.machineName, sessions_ended: live.length },
    });
    res.json({ success: true, machine_id: machineId });
  });

  r.get('/api/remote/machines/:id/browse', auth, async (req, res) => {
    await access.visibleMachine(req, String(req.params.id));
    void res;
    throw new NotImplementedError(
      'Remote file browsing is reserved: it needs the WebSocket agent transport, which is not available yet',
    );
  });

  return r;
}
