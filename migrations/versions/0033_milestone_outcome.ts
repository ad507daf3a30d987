import { workflowMilestones } from '../../db/schema/index.ts';
import { defineMigration } from '../migration.ts';

// Distinct milestone outcomes (issue 15 item 4; spec document 2 "Errors" 4: runner failure, empty
// output, context overflow and no-new-code outcomes are recorded separately). The milestone row gets
// the structured outcome of its step's run (domain/autonomous/milestones.ts MILESTONE_OUTCOMES), next
// to the human `error` text, so the timeline API can tell the four apart without parsing text.
// Expand: one nullable column no older build reads.
export default defineMigration({
  id: '0033_milestone_outcome',
  kind: 'expand',
  description: 'workflow_milestones.outcome (structured outcome of the step run)',
  addsColumns: [[workflowMilestones, [workflowMilestones.outcome]]],
});
