-- 0012_usage_uploads (sqlite, down): frozen by `npm run migrate -- freeze 0012_usage_uploads`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

DROP TABLE IF EXISTS "usage_uploads";
