-- 0011_usage_estimated_tokens (postgres, up): frozen by `npm run migrate -- freeze 0011_usage_estimated_tokens`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

ALTER TABLE "daily_usage" ADD COLUMN "estimated_tokens" bigint NOT NULL DEFAULT 0;
