-- 0018_compliance_reports (sqlite, up): frozen by `npm run migrate -- freeze 0018_compliance_reports`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "compliance_reports" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "report_id" TEXT NOT NULL CONSTRAINT "compliance_reports_report_id_unique" UNIQUE,
  "tenant_id" INTEGER,
  "report_type" TEXT NOT NULL,
  "period_start" TEXT NOT NULL,
  "period_end" TEXT NOT NULL,
  "format" TEXT NOT NULL,
  "created_by" INTEGER,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "summary" TEXT,
  "content" TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS "compliance_reports_tenant" ON "compliance_reports" ("tenant_id", "created_at");
