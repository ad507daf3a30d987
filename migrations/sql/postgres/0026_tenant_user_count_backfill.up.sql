-- 0026_tenant_user_count_backfill (postgres, up): frozen by `npm run migrate -- freeze 0026_tenant_user_count_backfill`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

UPDATE tenants SET user_count = (SELECT COUNT(*) FROM users u WHERE u.tenant_id = tenants.id AND u.deleted_at IS NULL);
