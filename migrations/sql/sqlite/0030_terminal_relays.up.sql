-- 0030_terminal_relays (sqlite, up): frozen by `npm run migrate -- freeze 0030_terminal_relays`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "terminal_relays" (
  "session_id" TEXT PRIMARY KEY,
  "instance_url" TEXT NOT NULL,
  "instance_id" TEXT NOT NULL,
  "expires_at" INTEGER NOT NULL,
  "updated_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer))
);
