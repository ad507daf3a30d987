// The one place remote routes decide what the caller may see and do. Visibility rule (used by every
// remote route): a machine or session the caller may not see answers 404, never 403, so its existence
// is not revealed; a machine the caller can see but may not act on answers 403.
import type { Request } from 'express';
import { machineAssignmentsRepository } from '../../../db/repositories/machine-assignments.ts';
import { type RemoteMachineRow, remoteMachinesRepository } from '../../../db/repositories/remote-machines.ts';
import { type RemoteSessionRow, remoteSessionsRepository } from '../../../db/repositories/remote-sessions.ts';
import { NotFoundError } from '../../../domain/errors.ts';
import {
  isMachinePermission,
  type MachinePermission,
  type MachineStanding,
  machineStanding,
  mayPerform,
  maySeeSession,
} from '../../../domain/remote-authority.ts';
import type { AppDeps } from '../../../services/deps.ts';

export const MACHINE_NOT_FOUND = 'Machine not found';
export const SESSION_NOT_FOUND = 'Session not found';

export interface MachineAccess {
  machine: RemoteMachineRow;
  standing: MachineStanding;
  permission: MachinePermission | null;
}

export interface SessionAccess {
  session: RemoteSessionRow;
  standing: MachineStanding;
  isOwner: boolean;
}

export function remoteAccess(deps: AppDeps) {
  const machines = remoteMachinesRepository(deps.database);
  const assignments = machineAssignmentsRepository(deps.database);
  const sessions = remoteSessionsRepository(deps.database);

  async function standingOn(
    req: Request,
    machineId: string,
  ): Promise<{ standing: MachineStanding; permission: MachinePermission | null }> {
    const row = await assignments.find(machineId, req.auth.user.id);
    const permission = row && isMachinePermission(row.permission) ? row.permission : null;
    return { standing: machineStanding(req.auth.user, permission), permission };
  }

  return {
    standingOn,
    /** The machine with the caller's standing; 404 when it does not exist or the caller may not see it. */
    async visibleMachine(req: Request, machineId: string): Promise<MachineAccess> {
      const machine = await machines.find(machineId);
      if (!machine) throw new NotFoundError(MACHINE_NOT_FOUND);
      const { standing, permission } = await standingOn(req, machineId);
      if (!mayPerform('view_machine', standing)) throw new NotFoundError(MACHINE_NOT_FOUND);
      return { machine, standing, permission };
    },
    /** The session with the caller's standing on its machine; 404 unless owner or allowed to see others'. */
    async visibleSession(req: Request, sessionId: string): Promise<SessionAccess> {
      const session = await sessions.find(sessionId);
      if (!session) throw new NotFoundError(SESSION_NOT_FOUND);
      const isOwner = session.userId === req.auth.user.id;
      // Machine-level standing counts only on the machine generation the session was bound to: the
      // admins of a later machine registered under the same id do not inherit its sessions.
      const machine = session.remoteMachineId ? await machines.find(session.remoteMachineId) : undefined;
      const { standing } =
        machine && machine.machineKey === session.remoteMachineKey
          ? await standingOn(req, machine.machineId)
          : { standing: machineStanding(req.auth.user, null) };
      if (!maySeeSession(standing, isOwner)) throw new NotFoundError(SESSION_NOT_FOUND);
      return { session, standing, isOwner };
    },
  };
}

export type RemoteAccess = ReturnType<typeof remoteAccess>;
