-- 0043_otel_productivity (sqlite, up): frozen by `npm run migrate -- freeze 0043_otel_productivity`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "otel_productivity_daily" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "date" TEXT NOT NULL,
  "tenant_id" INTEGER NOT NULL,
  "user_id" INTEGER NOT NULL,
  "tool_name" TEXT NOT NULL,
  "lines_added" INTEGER NOT NULL DEFAULT 0,
  "lines_removed" INTEGER NOT NULL DEFAULT 0,
  "commits" INTEGER NOT NULL DEFAULT 0,
  "pull_requests" INTEGER NOT NULL DEFAULT 0,
  "edits_accepted" INTEGER NOT NULL DEFAULT 0,
  "edits_rejected" INTEGER NOT NULL DEFAULT 0,
  "active_ms" INTEGER NOT NULL DEFAULT 0
);

CREATE UNIQUE INDEX IF NOT EXISTS "otel_productivity_daily_key" ON "otel_productivity_daily" ("date", "tenant_id", "user_id", "tool_name");

CREATE TABLE IF NOT EXISTS "otel_metric_series" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "user_id" INTEGER NOT NULL,
  "series_key" TEXT NOT NULL,
  "start_time_nanos" TEXT NOT NULL,
  "time_nanos" TEXT NOT NULL,
  "value_milli" INTEGER NOT NULL,
  "tenant_id" INTEGER,
  "updated_at" INTEGER NOT NULL
);

CREATE UNIQUE INDEX IF NOT EXISTS "otel_metric_series_key" ON "otel_metric_series" ("user_id", "series_key");
