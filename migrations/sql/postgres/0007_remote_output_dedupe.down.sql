-- 0007_remote_output_dedupe (postgres, down): frozen by `npm run migrate -- freeze 0007_remote_output_dedupe`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

DROP INDEX IF EXISTS "remote_runtime_outputs_session_source";

ALTER TABLE "remote_runtime_outputs" DROP COLUMN "source_key";
