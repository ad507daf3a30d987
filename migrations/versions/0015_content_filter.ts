import { contentFilterVersion, dailyMessages } from '../../db/schema/index.ts';
import { defineMigration } from '../migration.ts';

// Content filter (issue 11 item 1): uploaded messages of a tenant with content_filter_enabled are
// stored with the filter's verdict (a blocked message is flagged, never dropped); a one-row version
// counter, bumped by every rule write, lets every API instance notice rule changes and drop its
// compiled rules (services/content-filter.ts).
export default defineMigration({
  id: '0015_content_filter',
  kind: 'expand',
  description:
    'content filter: daily_messages.filter_verdict, content_filter_version (rule cache invalidation)',
  creates: [contentFilterVersion],
  addsColumns: [[dailyMessages, [dailyMessages.filterVerdict]]],
  async up(sql) {
    await sql.exec('INSERT INTO content_filter_version (id, version) VALUES (1, 0)');
  },
});
