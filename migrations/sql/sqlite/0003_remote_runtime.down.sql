-- 0003_remote_runtime (sqlite, down): frozen by `npm run migrate -- freeze 0003_remote_runtime`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

DROP TABLE IF EXISTS "remote_runtime_outputs";

DROP TABLE IF EXISTS "remote_runtime_commands";
