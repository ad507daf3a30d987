import {
  autonomousBatches,
  autonomousSessionLines,
  autonomousWorkflows,
  workflowMilestones,
} from '../../db/schema/index.ts';
import { defineMigration } from '../migration.ts';

// The autonomous engine (issue 13 items 1, 4, 5): the columns of autonomous_workflows and
// workflow_milestones the spec lists that 0005 lacked (project, tool, model, branch strategy,
// baseline, phase and deadline instants, pause reason, retry count; milestone sequence, phase,
// attempt, start), the batches, and the four stable session lines of every workflow. Expand only:
// every added column is nullable or defaulted. The indexes on added columns are created here
// (CREATE TABLE of 0005 cannot know them) and dropped before the columns on the way down.
export default defineMigration({
  id: '0023_autonomous_engine',
  kind: 'expand',
  description:
    'autonomous engine: workflow project/tool/model/strategy/baseline/deadlines/paused_by, milestone sequence/phase/attempt, autonomous_batches, autonomous_session_lines',
  creates: [autonomousBatches, autonomousSessionLines],
  addsColumns: [
    [
      autonomousWorkflows,
      [
        autonomousWorkflows.projectId,
        autonomousWorkflows.cliTool,
        autonomousWorkflows.model,
        autonomousWorkflows.branchStrategy,
        autonomousWorkflows.baselineSha,
        autonomousWorkflows.startedAt,
        autonomousWorkflows.phaseStartedAt,
        autonomousWorkflows.planningDeadlineAt,
        autonomousWorkflows.taskDeadlineAt,
        autonomousWorkflows.pausedBy,
        autonomousWorkflows.feedbackReturnPhase,
        autonomousWorkflows.retryCount,
        autonomousWorkflows.lastTransitionAt,
        autonomousWorkflows.verifiedAt,
      ],
    ],
    [
      workflowMilestones,
      [
        workflowMilestones.sequence,
        workflowMilestones.phase,
        workflowMilestones.attempt,
        workflowMilestones.startedAt,
      ],
    ],
  ],
  async up(sql) {
    // Rows written before this revision get their sequence in insertion order.
    await sql.exec(
      'UPDATE workflow_milestones SET sequence = (SELECT COUNT(*) FROM workflow_milestones m2 WHERE m2.workflow_id = workflow_milestones.workflow_id AND m2.id <= workflow_milestones.id) WHERE sequence IS NULL',
    );
    await sql.exec(
      'CREATE INDEX IF NOT EXISTS autonomous_workflows_tenant_status ON autonomous_workflows (tenant_id, status)',
    );
    await sql.exec(
      'CREATE INDEX IF NOT EXISTS autonomous_workflows_project ON autonomous_workflows (project_id)',
    );
    await sql.exec(
      'CREATE UNIQUE INDEX IF NOT EXISTS workflow_milestones_sequence ON workflow_milestones (workflow_id, sequence)',
    );
  },
  async down(sql) {
    await sql.exec('DROP INDEX IF EXISTS workflow_milestones_sequence');
    await sql.exec('DROP INDEX IF EXISTS autonomous_workflows_project');
    await sql.exec('DROP INDEX IF EXISTS autonomous_workflows_tenant_status');
  },
});
