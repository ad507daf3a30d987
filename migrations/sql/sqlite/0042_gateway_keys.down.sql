-- 0042_gateway_keys (sqlite, down): frozen by `npm run migrate -- freeze 0042_gateway_keys`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

DROP TABLE IF EXISTS "gateway_key_usage";

DROP TABLE IF EXISTS "gateway_keys";
