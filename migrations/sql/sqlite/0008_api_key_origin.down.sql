-- 0008_api_key_origin (sqlite, down): frozen by `npm run migrate -- freeze 0008_api_key_origin`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

DROP INDEX IF EXISTS "api_key_store_tenant_name";

ALTER TABLE "api_key_store" DROP COLUMN "created_by_system_admin";
