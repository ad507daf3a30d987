-- 0036_autonomous_activity_events (postgres, down): frozen by `npm run migrate -- freeze 0036_autonomous_activity_events`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

DROP TABLE IF EXISTS "autonomous_activity_events";
