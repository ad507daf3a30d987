-- 0004_proxy_tokens (sqlite, down): frozen by `npm run migrate -- freeze 0004_proxy_tokens`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

DROP TABLE IF EXISTS "usage_reports";

DROP TABLE IF EXISTS "proxy_tokens";
