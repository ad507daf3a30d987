-- 0043_otel_productivity (postgres, up): frozen by `npm run migrate -- freeze 0043_otel_productivity`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "otel_productivity_daily" (
  "id" serial PRIMARY KEY,
  "date" varchar(10) NOT NULL,
  "tenant_id" integer NOT NULL,
  "user_id" integer NOT NULL,
  "tool_name" varchar(100) NOT NULL,
  "lines_added" bigint NOT NULL DEFAULT 0,
  "lines_removed" bigint NOT NULL DEFAULT 0,
  "commits" bigint NOT NULL DEFAULT 0,
  "pull_requests" bigint NOT NULL DEFAULT 0,
  "edits_accepted" bigint NOT NULL DEFAULT 0,
  "edits_rejected" bigint NOT NULL DEFAULT 0,
  "active_ms" bigint NOT NULL DEFAULT 0
);

CREATE UNIQUE INDEX IF NOT EXISTS "otel_productivity_daily_key" ON "otel_productivity_daily" ("date", "tenant_id", "user_id", "tool_name");

CREATE TABLE IF NOT EXISTS "otel_metric_series" (
  "id" serial PRIMARY KEY,
  "user_id" integer NOT NULL,
  "series_key" varchar(64) NOT NULL,
  "start_time_nanos" varchar(24) NOT NULL,
  "time_nanos" varchar(24) NOT NULL,
  "value_milli" bigint NOT NULL,
  "tenant_id" integer,
  "updated_at" timestamp with time zone NOT NULL
);

CREATE UNIQUE INDEX IF NOT EXISTS "otel_metric_series_key" ON "otel_metric_series" ("user_id", "series_key");
