-- 0018_compliance_reports (postgres, up): frozen by `npm run migrate -- freeze 0018_compliance_reports`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "compliance_reports" (
  "id" serial PRIMARY KEY,
  "report_id" varchar(64) NOT NULL CONSTRAINT "compliance_reports_report_id_unique" UNIQUE,
  "tenant_id" integer,
  "report_type" varchar(50) NOT NULL,
  "period_start" varchar(10) NOT NULL,
  "period_end" varchar(10) NOT NULL,
  "format" varchar(8) NOT NULL,
  "created_by" integer,
  "created_at" timestamp with time zone NOT NULL DEFAULT now(),
  "summary" text,
  "content" text NOT NULL
);

CREATE INDEX IF NOT EXISTS "compliance_reports_tenant" ON "compliance_reports" ("tenant_id", "created_at");
