-- 0034_tenant_autonomous (postgres, down): frozen by `npm run migrate -- freeze 0034_tenant_autonomous`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

DROP TABLE IF EXISTS "tenant_autonomous_settings";
