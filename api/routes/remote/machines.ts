// Machine management (spec document 1, "Machine management"): listings, detail, unregistering, and the
// reserved browse endpoint. Assignments live in assignments.ts, registration tokens in registration-tokens.ts.
import { type Request, Router } from 'express';
import { z } from 'zod';
import { machineAssignmentsRepository } from '../../../db/repositories/machine-assignments.ts';
import { type RemoteMachineRow, remoteMachinesRepository } from '../../../db/repositories/remote-machines.ts';
import { isSystemAdmin } from '../../../domain/access.ts';
import { ForbiddenError, NotFoundError, NotImplementedError } from '../../../domain/errors.ts';
import { machineStatus, offlineAfterMs, storedStatusIsStale } from '../../../domain/machine-status.ts';
import {
  isMachinePermission,
  machineStanding,
  mayPerform,
  type RemoteAction,
} from '../../../domain/remote-authority.ts';
import { writeAudit } from '../../../services/audit.ts';
import type { AppDeps } from '../../../services/deps.ts';
import { authenticate } from '../../middleware/auth.ts';
import { endpoint } from '../../openapi/endpoint.ts';
import { sessionTeardown } from '../../remote-session-control.ts';
import { MACHINE_NOT_FOUND, remoteAccess } from './access.ts';
import { machineSchema, machineView } from './views.ts';

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const getRemoteMachines = endpoint({
  tags: ['remote'],
  summary: 'Machines the caller may see',
  responses: { 200: z.object({ machines: z.array(machineSchema) }) },
});
const getRemoteMachinesAvailable = endpoint({
  tags: ['remote'],
  summary: 'Machines the caller may start a session on',
  responses: { 200: z.object({ machines: z.array(machineSchema) }) },
});
const getRemoteMachine = endpoint({ tags: ['remote'], responses: { 200: machineSchema } });
const deleteRemoteMachines = endpoint({
  tags: ['remote'],
  responses: { 200: z.looseObject({ success: z.literal(true), machine_id: z.string() }) },
});
// Reserved by the spec: answers 501 (after the visibility check) until the WebSocket transport exists.
const getRemoteMachinesBrowse = endpoint({
  tags: ['remote'],
  description:
    'Reserved by the specification: answers 501 (after the visibility check) until the transport exists.',
  responses: {},
  errors: [501],
});

export function machinesRouter(deps: AppDeps): Router {
  const r = Router();
  const auth = authenticate(deps);
  const access = remoteAccess(deps);
  const machines = remoteMachinesRepository(deps.database);
  const assignments = machineAssignmentsRepository(deps.database);

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

  // POST /api/remote/machines/register (registration tokens) lives in registration-tokens.ts.

  r.get('/api/remote/machines', getRemoteMachines, auth, async (req, res) => {
    res.json({ machines: await visibleMachines(req, false) });
  });

  r.get('/api/remote/machines/available', getRemoteMachinesAvailable, auth, async (req, res) => {
    res.json({ machines: await visibleMachines(req, true) });
  });

  const offlineAfter = offlineAfterMs(deps.settings.agent);
  /**
   * Status of each machine from its heartbeat; rows whose stored status still says online past the
   * threshold are written back as offline here, where a reader first sees them.
   */
  async function withStatus<M extends RemoteMachineRow>(rows: M[]) {
    const now = deps.now();
    const stale = rows.filter((m) => storedStatusIsStale(m, now, offlineAfter)).map((m) => m.machineId);
    await machines.markOffline(stale, new Date(now.getTime() - offlineAfter));
    return rows.map((m) => ({ m, status: machineStatus(m.lastHeartbeat, now, offlineAfter) }));
  }

  /** System admins see every machine; everyone else the machines assigned to them, with their permission. */
  async function visibleMachines(req: Request, onlineOnly: boolean) {
    const shown = ({ status }: { status: string }) => !onlineOnly || status === 'online';
    if (isSystemAdmin(req.auth.user))
      return (await withStatus(await machines.listAll()))
        .filter(shown)
        .map((x) => machineView(x.m, x.status));
    const mine = await assignments.listForUser(req.auth.user.id);
    const permissionOf = new Map(mine.map((a) => [a.machineId, a.permission]));
    return (await withStatus(await machines.listByIds([...permissionOf.keys()]))).filter(shown).map((x) => {
      const p = permissionOf.get(x.m.machineId);
      return machineView(x.m, x.status, isMachinePermission(p) ? p : 'user');
    });
  }

  r.get('/api/remote/machines/:id', getRemoteMachine, auth, async (req, res) => {
    const { machine, permission } = await access.visibleMachine(req, String(req.params.id));
    const [x] = await withStatus([machine]);
    res.json(
      machineView(machine, x!.status, isSystemAdmin(req.auth.user) ? undefined : (permission ?? undefined)),
    );
  });

  r.delete('/api/remote/machines/:id', deleteRemoteMachines, auth, async (req, res) => {
    const machineId = String(req.params.id);
    await requireGlobal(req, 'unregister_machine', {
      action: 'REMOTE_MACHINE_DELETE',
      resourceId: machineId,
    });
    const machine = await machines.find(machineId);
    if (!machine) throw new NotFoundError(MACHINE_NOT_FOUND);
    // Sessions on the machine end with it, stopped through their workflows while the agent can still
    // hear the stop; a second pass after the delete catches a session created in between.
    const teardown = sessionTeardown(deps, req);
    const stopped = await teardown.stopMatching({ machineId }, 'machine_removed');
    await machines.delete(machineId);
    stopped.push(...(await teardown.stopMatching({ machineId }, 'machine_removed')));
    await writeAudit(deps, req, {
      action: 'REMOTE_MACHINE_DELETE',
      resourceType: 'remote_machine',
      resourceId: machineId,
      targetTenantId: machine.tenantId,
      details: { machine_name: machine.machineName, sessions_ended: stopped.length },
    });
    res.json({ success: true, machine_id: machineId });
  });

  r.get('/api/remote/machines/:id/browse', getRemoteMachinesBrowse, auth, async (req, res) => {
    await access.visibleMachine(req, String(req.params.id));
    void res;
    throw new NotImplementedError(
      'Remote file browsing is reserved: it needs the WebSocket agent transport, which is not available yet',
    );
  });

  return r;
}
