-- 0013_usage_read_model (sqlite, down): frozen by `npm run migrate -- freeze 0013_usage_read_model`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

DROP TRIGGER IF EXISTS daily_messages_fts_update;

DROP TRIGGER IF EXISTS daily_messages_fts_delete;

DROP TRIGGER IF EXISTS daily_messages_fts_insert;

DROP TABLE IF EXISTS daily_messages_fts;

DROP INDEX IF EXISTS quota_alerts_tenant;

DROP INDEX IF EXISTS quota_alerts_once;

DROP INDEX IF EXISTS daily_messages_user_date;

DROP INDEX IF EXISTS daily_messages_tenant_date;

ALTER TABLE "daily_messages" DROP COLUMN "tenant_id";

ALTER TABLE "quota_alerts" DROP COLUMN "tenant_id";

ALTER TABLE "quota_alerts" DROP COLUMN "period";

ALTER TABLE "quota_alerts" DROP COLUMN "period_key";

ALTER TABLE "quota_alerts" DROP COLUMN "dedupe_key";

ALTER TABLE "quota_alerts" DROP COLUMN "acknowledged_by";

ALTER TABLE "quota_alerts" DROP COLUMN "acknowledged_at";

DROP TABLE IF EXISTS "collector_files";

DROP TABLE IF EXISTS "collector_runs";
