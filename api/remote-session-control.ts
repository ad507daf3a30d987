// The API's side of the remote session workflow: start it (update-with-start, so creation returns once
// the session is bound and its start command queued) and drive lifecycle changes through updates, so
// a call returns after the state changed. Temporal errors become the API's error classes.
import { WithStartWorkflowOperation, WorkflowUpdateFailedError } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import type { Request } from 'express';
import { ConflictError } from '../domain/errors.ts';
import { writeAudit } from '../services/audit.ts';
import type { AppDeps } from '../services/deps.ts';
import { remoteSessionTeardown } from '../services/remote-session-teardown.ts';
import type { TemporalAccess } from '../services/temporal.ts';
import { rethrowIfTemporalUnavailable } from '../services/temporal-unavailable.ts';
import {
  INVALID_TRANSITION,
  type LifecycleResult,
  pauseSessionUpdate,
  type RemoteSessionInput,
  remoteSessionWorkflowId,
  resumeSessionUpdate,
  rotateTokenUpdate,
  type SessionEnd,
  sessionBoundUpdate,
  sessionEndedSignal,
  setModelUpdate,
  stopSessionUpdate,
} from '../workflows/remote/contract.ts';
import { remoteSessionWorkflow } from '../workflows/remote-session.ts';

function translate(err: unknown): never {
  // First: a missing namespace also arrives as a WorkflowNotFoundError, an outage inside a ServiceError.
  rethrowIfTemporalUnavailable(err);
  if (err instanceof WorkflowUpdateFailedError) {
    const cause = err.cause as { type?: string; message?: string } | undefined;
    if (cause?.type === INVALID_TRANSITION) throw new ConflictError(cause.message ?? 'Invalid session state');
    // A validator rejection arrives the same way, with the failure's message.
    if (cause?.message) throw new ConflictError(cause.message);
  }
  if (err instanceof WorkflowNotFoundError) throw new ConflictError('The session is no longer running');
  const message = (err as Error)?.message ?? '';
  if (/already completed|workflow execution already/i.test(message))
    throw new ConflictError('The session is no longer running');
  throw err;
}

export function remoteSessionControl(temporal: TemporalAccess) {
  const handle = async (sessionId: string) =>
    (await temporal.client()).workflow.getHandle(remoteSessionWorkflowId(sessionId));
  const update = async (sessionId: string, def: typeof pauseSessionUpdate): Promise<LifecycleResult> => {
    try {
      return await (await handle(sessionId)).executeUpdate(def);
    } catch (err) {
      translate(err);
    }
  };

  return {
    async start(input: RemoteSessionInput): Promise<LifecycleResult> {
      try {
        const client = await temporal.client();
        return await client.workflow.executeUpdateWithStart(sessionBoundUpdate, {
          startWorkflowOperation: new WithStartWorkflowOperation(remoteSessionWorkflow, {
            workflowId: remoteSessionWorkflowId(input.sessionId),
            taskQueue: temporal.taskQueue,
            args: [input],
            workflowIdConflictPolicy: 'FAIL',
          }),
        });
      } catch (err) {
        translate(err);
      }
    },
    pause: (sessionId: string) => update(sessionId, pauseSessionUpdate),
    resume: (sessionId: string) => update(sessionId, resumeSessionUpdate),
    stop: (sessionId: string) => update(sessionId, stopSessionUpdate),
    rotateToken: (sessionId: string) => update(sessionId, rotateTokenUpdate),
    async setModel(sessionId: string, model: string): Promise<LifecycleResult> {
      try {
        return await (await handle(sessionId)).executeUpdate(setModelUpdate, { args: [{ model }] });
      } catch (err) {
        translate(err);
      }
    },
    /**
     * Stops the session from any live state: a start still in progress is waited out first (a stop is
     * refused while `starting`), then the stop update runs, which revokes the token and tells the agent.
     */
    async stopNow(sessionId: string): Promise<LifecycleResult> {
      try {
        const h = await handle(sessionId);
        await h.executeUpdate(sessionBoundUpdate);
        return await h.executeUpdate(stopSessionUpdate);
      } catch (err) {
        translate(err);
      }
    },
    /** The session ended outside the API (CLI exit, machine removed); a finished workflow is fine. */
    async ended(sessionId: string, end: SessionEnd): Promise<void> {
      try {
        await (await handle(sessionId)).signal(sessionEndedSignal, end);
      } catch (err) {
        if (err instanceof WorkflowNotFoundError || /already completed/i.test((err as Error)?.message ?? ''))
          return;
        throw err;
      }
    },
  };
}

export type RemoteSessionControl = ReturnType<typeof remoteSessionControl>;

/** The teardown service (services/remote-session-teardown.ts) bound to a request, whose actor it audits. */
export const sessionTeardown = (deps: AppDeps, req: Request) =>
  remoteSessionTeardown({
    ...deps,
    logger: req.log,
    stopper: remoteSessionControl(deps.temporal),
    audit: (entry) => writeAudit(deps, req, entry),
  });
