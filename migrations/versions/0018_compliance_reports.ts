import { complianceReports } from '../../db/schema/index.ts';
import { defineMigration } from '../migration.ts';

// Compliance reports (issue 11 item 4): generated reports are saved so they can be listed and fetched.
export default defineMigration({
  id: '0018_compliance_reports',
  kind: 'expand',
  description: 'compliance_reports: saved compliance reports (type, period, format, author, content)',
  creates: [complianceReports],
});
