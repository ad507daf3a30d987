-- 0035_upload_tokens (postgres, down): frozen by `npm run migrate -- freeze 0035_upload_tokens`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

DROP TABLE IF EXISTS "upload_tokens";
