-- 0022_org_teams (postgres, down): frozen by `npm run migrate -- freeze 0022_org_teams`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

DROP TABLE IF EXISTS "org_sync_items";

DROP TABLE IF EXISTS "org_sync_runs";

DROP TABLE IF EXISTS "team_members";

DROP TABLE IF EXISTS "teams";
