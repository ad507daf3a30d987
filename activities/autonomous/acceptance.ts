// Activities of the acceptance snapshot (services/autonomous/acceptance.ts): take its hash when the
// workflow starts, read it again for the post-merge verifier, and close an issue requirement's issue
// after a confirmed verdict. Inputs and results carry ids, hashes and the snapshot text (the
// requirement or the issue's public text, capped); never a secret.
import { ApplicationFailure } from '@temporalio/activity';
import { NotFoundError } from '../../domain/errors.ts';
import { type AcceptanceSnapshot, acceptanceSnapshots } from '../../services/autonomous/acceptance.ts';
import type { ActivityDeps } from '../deps.ts';

export type { AcceptanceSnapshot };

export function createAutonomousAcceptanceActivities(deps: ActivityDeps) {
  const snapshots = acceptanceSnapshots(deps);
  const missing = (err: unknown) =>
    err instanceof NotFoundError ? ApplicationFailure.nonRetryable(err.message, 'NotFound') : err;
  return {
    async takeAutonomousAcceptanceSnapshot(input: { workflowId: string }) {
      return snapshots.take(input.workflowId).catch((e) => {
        throw missing(e);
      });
    },

    async autonomousAcceptanceSnapshot(input: { workflowId: string }): Promise<AcceptanceSnapshot> {
      return snapshots.current(input.workflowId).catch((e) => {
        throw missing(e);
      });
    },

    /** Never throws for a tracker failure: the verdict stands; the result says what happened. */
    async closeAutonomousIssue(input: {
      workflowId: string;
      how: 'confirmed' | 'override';
    }): Promise<{ closed: boolean; reason: string }> {
      try {
        return await snapshots.closeIssue(input.workflowId, input.how);
      } catch (e) {
        return {
          closed: false,
          reason: `the issue could not be closed: ${(e as Error).message}`.slice(0, 500),
        };
      }
    },
  };
}

export type AutonomousAcceptanceActivities = ReturnType<typeof createAutonomousAcceptanceActivities>;
