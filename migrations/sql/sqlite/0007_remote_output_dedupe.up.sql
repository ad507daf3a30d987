-- 0007_remote_output_dedupe (sqlite, up): frozen by `npm run migrate -- freeze 0007_remote_output_dedupe`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

ALTER TABLE "remote_runtime_outputs" ADD COLUMN "source_key" TEXT;

CREATE UNIQUE INDEX IF NOT EXISTS "remote_runtime_outputs_session_source" ON "remote_runtime_outputs" ("session_id", "source_key");
