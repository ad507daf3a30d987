-- 0010_remote_machine_key (postgres, up): frozen by `npm run migrate -- freeze 0010_remote_machine_key`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

ALTER TABLE "remote_machines" ADD COLUMN "machine_key" varchar(64);

ALTER TABLE "agent_sessions" ADD COLUMN "remote_machine_key" varchar(64);

ALTER TABLE "remote_runtime_commands" ADD COLUMN "machine_key" varchar(64);

ALTER TABLE "registration_tokens" ADD COLUMN "machine_id" varchar(64);

ALTER TABLE "registration_tokens" ADD COLUMN "revoked_at" timestamp with time zone;

ALTER TABLE "registration_tokens" ADD COLUMN "revoked_by" integer;

UPDATE "remote_machines" SET "machine_key" = 'legacy-' || "id" WHERE "machine_key" IS NULL;

UPDATE "agent_sessions" SET "remote_machine_key" = (SELECT m."machine_key" FROM "remote_machines" m
         WHERE m."machine_id" = "agent_sessions"."remote_machine_id")
       WHERE "remote_machine_id" IS NOT NULL AND "remote_machine_key" IS NULL;

UPDATE "remote_runtime_commands" SET "machine_key" = (SELECT m."machine_key" FROM "remote_machines" m
         WHERE m."machine_id" = "remote_runtime_commands"."machine_id")
       WHERE "machine_key" IS NULL;

CREATE INDEX IF NOT EXISTS "usage_reports_session_received" ON "usage_reports" ("session_id", "created_at");
