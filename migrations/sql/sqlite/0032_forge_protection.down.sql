-- 0032_forge_protection (sqlite, down): frozen by `npm run migrate -- freeze 0032_forge_protection`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

ALTER TABLE "forge_pull_requests" DROP COLUMN "draft";

DROP TABLE IF EXISTS "forge_pull_request_reviews";
