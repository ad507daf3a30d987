-- 0041_alert_reads (sqlite, down): frozen by `npm run migrate -- freeze 0041_alert_reads`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

ALTER TABLE "daily_messages" DROP COLUMN "filter_rules";

DROP TABLE IF EXISTS "alert_reads";
