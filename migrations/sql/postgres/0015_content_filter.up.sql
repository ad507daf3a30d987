-- 0015_content_filter (postgres, up): frozen by `npm run migrate -- freeze 0015_content_filter`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "content_filter_version" (
  "id" integer PRIMARY KEY,
  "version" integer NOT NULL DEFAULT 0
);

ALTER TABLE "daily_messages" ADD COLUMN "filter_verdict" varchar(20);

INSERT INTO content_filter_version (id, version) VALUES (1, 0);
