import { alertReads, dailyMessages } from '../../db/schema/index.ts';
import { defineMigration } from '../migration.ts';

// Per-user read state of alerts (issue 28 item 5): one administrator's "mark all read" cleared the
// tenant-wide alerts of every other administrator, because `read` was a column of the alert. Expand: a
// new table; `alerts.read` stays for older builds. What was read before is carried over: an alert of
// a user for that user, a tenant-wide one for every administrator (who alone see those; one who
// cannot see it is given a row that never shows). Also `daily_messages.filter_rules`: the content
// filter's matched rules of a flagged message (issue 28 item 5, verdicts shown on the messages).
export default defineMigration({
  id: '0041_alert_reads',
  kind: 'expand',
  description:
    'alert_reads: which user has read which alert (read state per user); daily_messages.filter_rules: why a message was flagged',
  creates: [alertReads],
  addsColumns: [[dailyMessages, [dailyMessages.filterRules]]],
  up: async (sql) => {
    await sql.exec(
      `INSERT INTO alert_reads (alert_id, user_id, read_at)
       SELECT a.id, a.user_id, a.created_at FROM alerts a
       WHERE a.read = TRUE AND a.user_id IS NOT NULL AND EXISTS (SELECT 1 FROM users u WHERE u.id = a.user_id)`,
    );
    await sql.exec(
      `INSERT INTO alert_reads (alert_id, user_id, read_at)
       SELECT a.id, u.id, a.created_at FROM alerts a, users u
       WHERE a.read = TRUE AND a.user_id IS NULL
         AND u.role IN ('platform_admin', 'admin', 'tenant_admin')
         AND (u.tenant_id IS NULL OR u.tenant_id = a.tenant_id OR u.role IN ('platform_admin', 'admin'))`,
    );
  },
});
