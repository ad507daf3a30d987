import { autonomousWorkflows, workflowMilestones } from '../../db/schema/index.ts';
import { defineMigration } from '../migration.ts';

export default defineMigration({
  id: '0005_autonomous_workflows',
  kind: 'expand',
  description: 'autonomous development workflows and their milestones',
  creates: [autonomousWorkflows, workflowMilestones],
});
