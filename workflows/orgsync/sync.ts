// One org sync of one chat platform into one tenant (spec document 2, "Organization sync and alert
// webhooks" items 1-3; issue 12 item 4). Started by POST /api/admin/<platform>/sync (workflow id
// `orgsync-<platform>-t<tenant>-<random>`) or by the platform's Temporal Schedule
// (services/orgsync/schedule.ts); the workflow id is the run id of org_sync_runs.
//
// Steps, one activity each (activities/orgsync/sync.ts):
//   1. start: the run row is written `running`; the department the walk starts from;
//   2. departments: breadth-first from that root, one activity per page of direct children
//      (PAGE_PARALLELISM departments at a time);
//   3. users: one activity per page of each department's users (the root's too), likewise;
//   4. teams: created/renamed from the staged departments (removed departments' teams are kept);
//   5. users: one activity per chunk of USER_CHUNK staged users: provision or link, memberships;
//   6. finish: memberships of users gone from the platform removed, display-name cache written, the
//      staged snapshot deleted, the run row closed (also on failure, with the error).
// Platform calls retry with exponential backoff (1 s doubling, up to 1 min, 8 attempts); a rate-limited
// answer waits the platform's hint instead (ApplicationFailure nextRetryDelay); bad credentials and
// other refusals are final.
//
// The history carries ids, cursors and counts only: never the app secret (the activities read it from
// settings) and never the snapshot (pages go to org_sync_items in the database, keyed by run id).
// Department ids of the whole tree are kept in workflow memory for the walk: fine for thousands of
// departments; a tree of tens of thousands would want continueAsNew between phases.
import { ActivityFailure, ApplicationFailure, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { OrgSyncActivities } from '../../activities/orgsync/sync.ts';
import type { Platform } from '../../domain/orgsync/platform.ts';
import { addCounts, emptyCounts, type OrgSyncCounts } from '../../domain/orgsync/reconcile.ts';

export const ORG_SYNC_ID_PREFIX = 'orgsync-';
export const USER_CHUNK = 200;
/** Departments whose pages are fetched at once (each department's own pages stay in order). */
export const PAGE_PARALLELISM = 4;

export interface OrgSyncInput {
  platform: Platform;
  tenantId: number;
}

const platformCalls = proxyActivities<OrgSyncActivities>({
  startToCloseTimeout: '1 minute',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 8,
    nonRetryableErrorTypes: [
      'OrgSyncAuthFailed',
      'OrgSyncRejected',
      'OrgSyncNotConfigured',
      'OrgSyncBadTenant',
    ],
  },
});

const dbSteps = proxyActivities<OrgSyncActivities>({
  startToCloseTimeout: '5 minutes',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 5,
    nonRetryableErrorTypes: ['OrgSyncNotConfigured', 'OrgSyncBadTenant'],
  },
});

/**
 * Like Promise.all, but waits for every call to settle before failing: no activity of the run is
 * still writing pages when the failure path clears them.
 */
async function settleAll<T>(calls: Promise<T>[]): Promise<T[]> {
  const results = await Promise.allSettled(calls);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}

/** The error text kept on the run row: the activity's own message, not the wrapper's. */
function reasonOf(err: unknown): string {
  if (err instanceof ActivityFailure && err.cause) return err.cause.message;
  return err instanceof Error ? err.message : String(err);
}

export async function orgSyncWorkflow(input: OrgSyncInput): Promise<OrgSyncCounts> {
  const run = { runId: workflowInfo().workflowId, platform: input.platform, tenantId: input.tenantId };
  let counts = emptyCounts();
  try {
    const { rootDepartmentId } = await dbSteps.orgSyncStart(run);

    // Walk the tree breadth-first, PAGE_PARALLELISM parents at a time (children merged in parent order,
    // so the walk is the same on every replay).
    const departments: string[] = [];
    const queue = [rootDepartmentId];
    const seen = new Set(queue);
    const childrenOf = async (parentId: string): Promise<string[]> => {
      const ids: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { childIds: string[]; nextCursor: string | null } =
          await platformCalls.orgSyncFetchDepartments({
            runId: run.runId,
            platform: run.platform,
            rootDepartmentId,
            parentId,
            cursor,
          });
        ids.push(...page.childIds);
        cursor = page.nextCursor;
      } while (cursor !== null);
      return ids;
    };
    while (queue.length > 0) {
      const parents = queue.splice(0, PAGE_PARALLELISM);
      for (const ids of await settleAll(parents.map(childrenOf)))
        for (const id of ids)
          if (!seen.has(id)) {
            seen.add(id);
            departments.push(id);
            queue.push(id);
          }
    }

    const usersOf = async (departmentId: string): Promise<void> => {
      let cursor: string | null = null;
      do {
        const page: { nextCursor: string | null } = await platformCalls.orgSyncFetchUsers({
          runId: run.runId,
          platform: run.platform,
          departmentId,
          cursor,
        });
        cursor = page.nextCursor;
      } while (cursor !== null);
    };
    const all = [rootDepartmentId, ...departments];
    for (let i = 0; i < all.length; i += PAGE_PARALLELISM)
      await settleAll(all.slice(i, i + PAGE_PARALLELISM).map(usersOf));

    counts = addCounts(counts, await dbSteps.orgSyncApplyTeams(run));
    let after: string | null = null;
    do {
      const chunk: { counts: Partial<OrgSyncCounts>; last: string | null } = await dbSteps.orgSyncApplyUsers({
        ...run,
        after,
        limit: USER_CHUNK,
      });
      counts = addCounts(counts, chunk.counts);
      after = chunk.last;
    } while (after !== null);
  } catch (err) {
    await dbSteps.orgSyncFinish({ ...run, counts, error: reasonOf(err) });
    if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure) throw err.cause;
    throw err;
  }
  const done = await dbSteps.orgSyncFinish({ ...run, counts, error: null });
  return addCounts(counts, { memberships_removed: done.memberships_removed });
}
