// Stops every live remote session matching a criterion, for the operations that take a user's right to
// a machine away: revoking an assignment, unregistering a machine, hard-deleting a tenant; and for
// quota enforcement (services/quota-enforcement.ts: users over quota).
//
// Protocol, per session:
//   1. the stop goes through the session's workflow (its stop update: the row becomes `stopped`, the
//      proxy token is revoked and the agent is told to stop the CLI), so the workflow does not keep
//      rotating tokens for a session that is over;
//   2. whatever step 1 did, the row is then marked stopped and the session's tokens revoked directly.
//      This is a no-op after a successful stop, and the whole job when the workflow is gone (finished,
//      never started, history deleted) or Temporal is unreachable;
//   3. one audit record names the session, its owner, its machine, the reason and how it was stopped.
// So when stopMatching returns, no matching session is live in the database and none of their proxy
// tokens is usable, whatever state Temporal is in.
//
// Limit: a session created concurrently (its row not inserted yet when the list is read) is missed; the
// callers remove the access that would allow a new session before calling this.
import type { Logger } from 'pino';
import type { DatabaseHandle } from '../db/client.ts';
import { type RemoteSessionRow, remoteSessionsRepository } from '../db/repositories/remote-sessions.ts';
import { proxyTokenService } from './proxy-tokens.ts';
import type { KeySettings } from './secrets.ts';

export type TeardownReason = 'assignment_revoked' | 'machine_removed' | 'tenant_deleted' | 'quota_exceeded';

export interface SessionMatch {
  machineId?: string;
  userId?: number;
  tenantId?: number;
}

/** The workflow side (api/remote-session-control.ts `stopNow`). */
export interface SessionStopper {
  stopNow(sessionId: string): Promise<unknown>;
}

/** One audit record; the caller binds it to its request (actor, address, request id). */
export interface TeardownAuditEntry {
  action: 'REMOTE_SESSION_STOP';
  resourceType: 'remote_session';
  resourceId: string;
  targetTenantId: number | null;
  details: Record<string, unknown>;
}

export interface StoppedSession {
  sessionId: string;
  userId: number | null;
  machineId: string | null;
  /** `workflow`: the stop update ran; `direct`: the workflow could not, the database row was ended. */
  via: 'workflow' | 'direct';
}

/** Stops run a few at a time: each may wait up to AGENT_ACK_WAIT_MS for the agent's answer. */
const PARALLEL_STOPS = 8;

export function remoteSessionTeardown(deps: {
  database: DatabaseHandle;
  settings: KeySettings;
  now: () => Date;
  logger: Pick<Logger, 'warn'>;
  stopper: SessionStopper;
  audit: (entry: TeardownAuditEntry) => Promise<void>;
}) {
  const sessions = remoteSessionsRepository(deps.database);
  const tokens = proxyTokenService(deps);

  async function stopOne(s: RemoteSessionRow, reason: TeardownReason): Promise<StoppedSession> {
    let via: StoppedSession['via'] = 'workflow';
    try {
      await deps.stopper.stopNow(s.sessionId);
    } catch (err) {
      via = 'direct';
      deps.logger.warn(
        { err, session_id: s.sessionId, reason },
        'session workflow could not stop the session; ending it in the database',
      );
    }
    const now = deps.now();
    await sessions.markStoppedIfLive(s.sessionId, now);
    await tokens.revokeForSession(s.sessionId, 'stopped');
    await deps.audit({
      action: 'REMOTE_SESSION_STOP',
      resourceType: 'remote_session',
      resourceId: s.sessionId,
      targetTenantId: s.tenantId,
      details: { reason, user_id: s.userId, machine_id: s.remoteMachineId, via },
    });
    return { sessionId: s.sessionId, userId: s.userId, machineId: s.remoteMachineId, via };
  }

  return {
    /** Stops every live session matching all given criteria; see the header for the guarantees. */
    async stopMatching(match: SessionMatch, reason: TeardownReason): Promise<StoppedSession[]> {
      const live = await sessions.listLive(match);
      const out: StoppedSession[] = [];
      for (let i = 0; i < live.length; i += PARALLEL_STOPS)
        out.push(...(await Promise.all(live.slice(i, i + PARALLEL_STOPS).map((s) => stopOne(s, reason)))));
      return out;
    },
  };
}

export type RemoteSessionTeardown = ReturnType<typeof remoteSessionTeardown>;
