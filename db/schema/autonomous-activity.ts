import { index, integer, pgTable, uniqueIndex } from 'drizzle-orm/pg-core';
import { autonomousWorkflows } from './autonomous.ts';
import { createdAt, id, int, str, txt } from './columns.ts';

// Table introduced by 0036_autonomous_activity_events: the live activity stream of autonomous
// workflows (services/autonomous/activity-bus.ts), stored so that every API instance can serve it
// whichever worker runs the CLI, and a reconnecting client resumes from Last-Event-ID. Observability,
// not audit: bounded per workflow (the last ACTIVITY_KEEP_PER_WORKFLOW rows), purged after the
// platform purge horizon by the retention schedule, and deleted with the workflow.
export const autonomousActivityEvents = pgTable(
  'autonomous_activity_events',
  {
    id: id(),
    workflowId: str('workflow_id', 64)
      .notNull()
      .references(() => autonomousWorkflows.workflowId, { onDelete: 'cascade' }),
    /** Gap-free per workflow (max + 1 in the writing transaction): the SSE `id:`. */
    seq: integer('seq').notNull(),
    /** The workflow's tenant when the event was stored (scope of a cross-tenant sweep). */
    tenantId: int('tenant_id'),
    /** The event as the runner published it (JSON, cut to a bounded size). */
    payload: txt('payload').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('autonomous_activity_events_workflow_seq').on(t.workflowId, t.seq),
    index('autonomous_activity_events_created').on(t.createdAt),
  ],
);
