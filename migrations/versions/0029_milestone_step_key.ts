import { workflowMilestones } from '../../db/schema/index.ts';
import { defineMigration } from '../migration.ts';

// Idempotent milestone start (issue 13 item 5): a milestone begun by an activity carries the
// workflow's key of that step, unique per workflow, so an activity retried after its insert (a worker
// killed between the insert and the completion) finds the row it wrote instead of adding a second one
// (db/repositories/autonomous/milestones.ts `begin`). NULLs are distinct on both dialects, so rows
// without a key (and history copied into a fork) never collide. Expand: one nullable column and an
// index no older build reads; the index is created here (the column's CREATE TABLE is 0005's) and
// dropped before the column on the way down.
export default defineMigration({
  id: '0029_milestone_step_key',
  kind: 'expand',
  description: 'workflow_milestones.step_key, unique (workflow_id, step_key)',
  addsColumns: [[workflowMilestones, [workflowMilestones.stepKey]]],
  async up(sql) {
    await sql.exec(
      'CREATE UNIQUE INDEX IF NOT EXISTS workflow_milestones_step_key ON workflow_milestones (workflow_id, step_key)',
    );
  },
  async down(sql) {
    await sql.exec('DROP INDEX IF EXISTS workflow_milestones_step_key');
  },
});
