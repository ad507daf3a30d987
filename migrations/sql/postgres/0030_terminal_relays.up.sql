-- 0030_terminal_relays (postgres, up): frozen by `npm run migrate -- freeze 0030_terminal_relays`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "terminal_relays" (
  "session_id" varchar(64) PRIMARY KEY,
  "instance_url" varchar(500) NOT NULL,
  "instance_id" varchar(64) NOT NULL,
  "expires_at" timestamp with time zone NOT NULL,
  "updated_at" timestamp with time zone NOT NULL DEFAULT now()
);
