-- 0041_alert_reads (postgres, up): frozen by `npm run migrate -- freeze 0041_alert_reads`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "alert_reads" (
  "id" serial PRIMARY KEY,
  "alert_id" integer NOT NULL REFERENCES "alerts"("id") ON DELETE CASCADE,
  "user_id" integer NOT NULL REFERENCES "users"("id") ON DELETE CASCADE,
  "read_at" timestamp with time zone NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX IF NOT EXISTS "alert_reads_alert_user" ON "alert_reads" ("alert_id", "user_id");

CREATE INDEX IF NOT EXISTS "alert_reads_user" ON "alert_reads" ("user_id");

ALTER TABLE "daily_messages" ADD COLUMN "filter_rules" text;

INSERT INTO alert_reads (alert_id, user_id, read_at)
       SELECT a.id, a.user_id, a.created_at FROM alerts a
       WHERE a.read = TRUE AND a.user_id IS NOT NULL AND EXISTS (SELECT 1 FROM users u WHERE u.id = a.user_id);

INSERT INTO alert_reads (alert_id, user_id, read_at)
       SELECT a.id, u.id, a.created_at FROM alerts a, users u
       WHERE a.read = TRUE AND a.user_id IS NULL
         AND u.role IN ('platform_admin', 'admin', 'tenant_admin')
         AND (u.tenant_id IS NULL OR u.tenant_id = a.tenant_id OR u.role IN ('platform_admin', 'admin'));
