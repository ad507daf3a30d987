-- 0030_terminal_relays (postgres, down): frozen by `npm run migrate -- freeze 0030_terminal_relays`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

DROP TABLE IF EXISTS "terminal_relays";
