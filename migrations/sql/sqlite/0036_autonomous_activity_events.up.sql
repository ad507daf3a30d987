-- 0036_autonomous_activity_events (sqlite, up): frozen by `npm run migrate -- freeze 0036_autonomous_activity_events`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "autonomous_activity_events" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "workflow_id" TEXT NOT NULL REFERENCES "autonomous_workflows"("workflow_id") ON DELETE CASCADE,
  "seq" INTEGER NOT NULL,
  "tenant_id" INTEGER,
  "payload" TEXT NOT NULL,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer))
);

CREATE UNIQUE INDEX IF NOT EXISTS "autonomous_activity_events_workflow_seq" ON "autonomous_activity_events" ("workflow_id", "seq");

CREATE INDEX IF NOT EXISTS "autonomous_activity_events_created" ON "autonomous_activity_events" ("created_at");
