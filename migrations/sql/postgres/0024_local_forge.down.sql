-- 0024_local_forge (postgres, down): frozen by `npm run migrate -- freeze 0024_local_forge`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

DROP INDEX IF EXISTS forge_pull_requests_open_head;

DROP TABLE IF EXISTS "forge_ci_runs";

DROP TABLE IF EXISTS "forge_pull_requests";
