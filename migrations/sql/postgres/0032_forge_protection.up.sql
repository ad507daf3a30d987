-- 0032_forge_protection (postgres, up): frozen by `npm run migrate -- freeze 0032_forge_protection`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "forge_pull_request_reviews" (
  "id" serial PRIMARY KEY,
  "pull_request_id" integer NOT NULL REFERENCES "forge_pull_requests"("id") ON DELETE CASCADE,
  "reviewer" varchar(255) NOT NULL,
  "state" varchar(32) NOT NULL,
  "head_sha" varchar(64) NOT NULL,
  "created_at" timestamp with time zone NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX IF NOT EXISTS "forge_pull_request_reviews_reviewer" ON "forge_pull_request_reviews" ("pull_request_id", "reviewer");

ALTER TABLE "forge_pull_requests" ADD COLUMN "draft" boolean NOT NULL DEFAULT false;
