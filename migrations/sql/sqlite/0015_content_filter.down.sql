-- 0015_content_filter (sqlite, down): frozen by `npm run migrate -- freeze 0015_content_filter`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

ALTER TABLE "daily_messages" DROP COLUMN "filter_verdict";

DROP TABLE IF EXISTS "content_filter_version";
