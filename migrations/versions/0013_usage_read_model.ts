import { collectorFiles, collectorRuns, dailyMessages, quotaAlerts } from '../../db/schema/index.ts';
import { defineMigration } from '../migration.ts';

export default defineMigration({
  id: '0013_usage_read_model',
  kind: 'expand',
  description:
    'usage read model: tenant_id on daily_messages (+ tenant/user indexes) and full-text search over its content; quota_alerts raised once per period; collector runs and file offsets',
  creates: [collectorRuns, collectorFiles],
  addsColumns: [
    [dailyMessages, [dailyMessages.tenantId]],
    [
      quotaAlerts,
      [
        quotaAlerts.tenantId,
        quotaAlerts.period,
        quotaAlerts.periodKey,
        quotaAlerts.dedupeKey,
        quotaAlerts.acknowledgedBy,
        quotaAlerts.acknowledgedAt,
      ],
    ],
  ],
  async up(sql) {
    // Existing messages take their user's tenant; unknown senders stay in tenant 1 (the default).
    await sql.exec(
      'UPDATE daily_messages SET tenant_id = (SELECT u.tenant_id FROM users u WHERE u.id = daily_messages.user_id) WHERE user_id IS NOT NULL AND EXISTS (SELECT 1 FROM users u WHERE u.id = daily_messages.user_id AND u.tenant_id IS NOT NULL)',
    );
    await sql.exec('CREATE INDEX daily_messages_tenant_date ON daily_messages (tenant_id, date)');
    await sql.exec('CREATE INDEX daily_messages_user_date ON daily_messages (user_id, date)');
    await sql.exec('CREATE UNIQUE INDEX quota_alerts_once ON quota_alerts (dedupe_key)');
    await sql.exec('CREATE INDEX quota_alerts_tenant ON quota_alerts (tenant_id)');
    if (sql.dialect === 'sqlite') {
      await sql.exec(
        "CREATE VIRTUAL TABLE daily_messages_fts USING fts5(content, content='daily_messages', content_rowid='id', tokenize='unicode61')",
      );
      await sql.exec(
        'CREATE TRIGGER daily_messages_fts_insert AFTER INSERT ON daily_messages BEGIN INSERT INTO daily_messages_fts(rowid, content) VALUES (new.id, new.content); END',
      );
      await sql.exec(
        "CREATE TRIGGER daily_messages_fts_delete AFTER DELETE ON daily_messages BEGIN INSERT INTO daily_messages_fts(daily_messages_fts, rowid, content) VALUES ('delete', old.id, old.content); END",
      );
      await sql.exec(
        "CREATE TRIGGER daily_messages_fts_update AFTER UPDATE OF content ON daily_messages BEGIN INSERT INTO daily_messages_fts(daily_messages_fts, rowid, content) VALUES ('delete', old.id, old.content); INSERT INTO daily_messages_fts(rowid, content) VALUES (new.id, new.content); END",
      );
      await sql.exec("INSERT INTO daily_messages_fts(daily_messages_fts) VALUES ('rebuild')");
    } else {
      await sql.exec(
        "CREATE INDEX daily_messages_content_search ON daily_messages USING GIN (to_tsvector('simple', coalesce(content, '')))",
      );
    }
  },
  async down(sql) {
    if (sql.dialect === 'sqlite') {
      await sql.exec('DROP TRIGGER IF EXISTS daily_messages_fts_update');
      await sql.exec('DROP TRIGGER IF EXISTS daily_messages_fts_delete');
      await sql.exec('DROP TRIGGER IF EXISTS daily_messages_fts_insert');
      await sql.exec('DROP TABLE IF EXISTS daily_messages_fts');
    } else {
      await sql.exec('DROP INDEX IF EXISTS daily_messages_content_search');
    }
    await sql.exec('DROP INDEX IF EXISTS quota_alerts_tenant');
    await sql.exec('DROP INDEX IF EXISTS quota_alerts_once');
    await sql.exec('DROP INDEX IF EXISTS daily_messages_user_date');
    await sql.exec('DROP INDEX IF EXISTS daily_messages_tenant_date');
  },
});
