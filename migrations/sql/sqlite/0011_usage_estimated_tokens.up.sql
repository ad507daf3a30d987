-- 0011_usage_estimated_tokens (sqlite, up): frozen by `npm run migrate -- freeze 0011_usage_estimated_tokens`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

ALTER TABLE "daily_usage" ADD COLUMN "estimated_tokens" INTEGER NOT NULL DEFAULT 0;
