// The API's handle on the Temporal runs of autonomous workflows (`autonomous-<id>`, contract in
// workflows/autonomous/contract.ts): start a run, execute a control update on it, terminate it.
//
// A run carries only the workflow id (`args: [{workflowId}]`): the row is the state, so a run started
// again for the same id (after the previous run ended, e.g. a failed workflow being retried) rebuilds
// itself from the row. Failure modes mapped here, so callers see the API's error classes:
//   - a refused control (the update's validator threw an ApplicationFailure of type AUTONOMOUS_REFUSED)
//                                                                    -> ConflictError (409, its reason);
//   - any other failed update (its handler failed)                   -> ServiceUnavailableError (503);
//   - no open run (WorkflowNotFoundError: the run ended)            -> started again, the update sent once more;
//   - an update that reaches a run before it registered its handlers -> sent again (untilRegistered);
//   - Temporal unreachable                                           -> ServiceUnavailableError (503).
import type { Client } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { type UpdateDefinition, WorkflowNotFoundError } from '@temporalio/common';
import { ConflictError, ServiceUnavailableError } from '../../domain/errors.ts';
import {
  AUTONOMOUS_REFUSED,
  AUTONOMOUS_WORKFLOW_TYPE,
  type AutonomousInput,
  type ControlResult,
  temporalWorkflowId,
} from '../../workflows/autonomous/contract.ts';
import { isTemporalUnavailable, rethrowIfTemporalUnavailable } from '../temporal-unavailable.ts';

export interface AutonomousTemporal {
  taskQueue: string;
  client(): Promise<Client>;
}

export { BACKGROUND_UNAVAILABLE } from '../temporal-unavailable.ts';

// A missing namespace also arrives as a WorkflowNotFoundError ("Namespace x is not found."): not a run
// that ended.
const isNotFound = (err: unknown) =>
  !isTemporalUnavailable(err) &&
  (err instanceof WorkflowNotFoundError ||
    /already completed|not found/i.test((err as Error)?.message ?? ''));

/**
 * A run registers its update handlers once it has loaded its row (an activity), so an update that
 * reaches a run in its first moments (just created, or just started again) is rejected with "No
 * registered handler" without touching history: it is sent again, for at most HANDLER_WAIT_MS.
 */
export const HANDLER_WAIT_MS = 15_000;
const notRegisteredYet = (err: unknown) =>
  err instanceof WorkflowUpdateFailedError &&
  /No registered handler for update/i.test((err.cause as Error | undefined)?.message ?? '');

async function untilRegistered<T>(fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + HANDLER_WAIT_MS;
  for (let delay = 50; ; delay = Math.min(delay * 2, 1000)) {
    try {
      return await fn();
    } catch (err) {
      if (!notRegisteredYet(err) || Date.now() + delay > deadline) throw err;
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

function translate(err: unknown): never {
  rethrowIfTemporalUnavailable(err);
  if (err instanceof WorkflowUpdateFailedError) {
    const cause = err.cause as { type?: string; message?: string } | undefined;
    if (cause?.type === AUTONOMOUS_REFUSED)
      throw new ConflictError(cause.message ?? 'The control was refused');
    // Anything else (a handler that failed, a run that never registered its handlers): no internal
    // detail goes out; the control did not happen and may be tried again.
    throw new ServiceUnavailableError('The workflow did not apply the control; try again');
  }
  throw err;
}

export function autonomousRuns(temporal: AutonomousTemporal) {
  const handle = async (workflowId: string) =>
    (await temporal.client()).workflow.getHandle(temporalWorkflowId(workflowId));

  /** Starts the run of `workflowId`; an already open run is fine (`false`). Throws when Temporal fails. */
  async function start(workflowId: string): Promise<boolean> {
    const input: AutonomousInput = { workflowId };
    try {
      await (await temporal.client()).workflow.start(AUTONOMOUS_WORKFLOW_TYPE, {
        workflowId: temporalWorkflowId(workflowId),
        taskQueue: temporal.taskQueue,
        args: [input],
      });
      return true;
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
      throw err;
    }
  }

  return {
    start,

    /**
     * Executes a control update. With no open run, starts the run again (it rebuilds from the row) and
     * executes the update once more.
     */
    async control<A>(
      workflowId: string,
      update: UpdateDefinition<ControlResult, [A]>,
      arg: A,
    ): Promise<ControlResult> {
      const once = () =>
        untilRegistered(async () => (await handle(workflowId)).executeUpdate(update, { args: [arg] }));
      try {
        try {
          return await once();
        } catch (err) {
          if (!isNotFound(err) || err instanceof WorkflowUpdateFailedError) throw err;
          await start(workflowId);
          return await once();
        }
      } catch (err) {
        translate(err);
      }
    },

    /** Terminates the open run, if any (a missing or finished run is fine). */
    async terminate(workflowId: string, reason: string): Promise<void> {
      try {
        await (await handle(workflowId)).terminate(reason);
      } catch (err) {
        if (isNotFound(err)) return;
        translate(err);
      }
    },
  };
}

export type AutonomousRuns = ReturnType<typeof autonomousRuns>;
