-- 0008_api_key_origin (sqlite, up): frozen by `npm run migrate -- freeze 0008_api_key_origin`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

ALTER TABLE "api_key_store" ADD COLUMN "created_by_system_admin" INTEGER NOT NULL DEFAULT 0;

UPDATE "api_key_store" SET "created_by_system_admin" = TRUE WHERE "created_by" IN (SELECT "id" FROM "users" WHERE "role" IN ('platform_admin', 'admin'));

UPDATE "api_key_store" SET "key_name" = SUBSTR("key_name", 1, 240) || ' #' || CAST("id" AS TEXT) WHERE "id" NOT IN (SELECT MIN("id") FROM "api_key_store" GROUP BY "tenant_id", "key_name");

CREATE UNIQUE INDEX IF NOT EXISTS "api_key_store_tenant_name" ON "api_key_store" ("tenant_id", "key_name");
