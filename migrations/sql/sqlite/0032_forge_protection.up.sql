-- 0032_forge_protection (sqlite, up): frozen by `npm run migrate -- freeze 0032_forge_protection`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "forge_pull_request_reviews" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "pull_request_id" INTEGER NOT NULL REFERENCES "forge_pull_requests"("id") ON DELETE CASCADE,
  "reviewer" TEXT NOT NULL,
  "state" TEXT NOT NULL,
  "head_sha" TEXT NOT NULL,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer))
);

CREATE UNIQUE INDEX IF NOT EXISTS "forge_pull_request_reviews_reviewer" ON "forge_pull_request_reviews" ("pull_request_id", "reviewer");

ALTER TABLE "forge_pull_requests" ADD COLUMN "draft" INTEGER NOT NULL DEFAULT 0;
