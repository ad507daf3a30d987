-- 0036_autonomous_activity_events (postgres, up): frozen by `npm run migrate -- freeze 0036_autonomous_activity_events`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "autonomous_activity_events" (
  "id" serial PRIMARY KEY,
  "workflow_id" varchar(64) NOT NULL REFERENCES "autonomous_workflows"("workflow_id") ON DELETE CASCADE,
  "seq" integer NOT NULL,
  "tenant_id" integer,
  "payload" text NOT NULL,
  "created_at" timestamp with time zone NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX IF NOT EXISTS "autonomous_activity_events_workflow_seq" ON "autonomous_activity_events" ("workflow_id", "seq");

CREATE INDEX IF NOT EXISTS "autonomous_activity_events_created" ON "autonomous_activity_events" ("created_at");
