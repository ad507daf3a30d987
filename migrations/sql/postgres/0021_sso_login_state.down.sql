-- 0021_sso_login_state (postgres, down): frozen by `npm run migrate -- freeze 0021_sso_login_state`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

DROP TABLE IF EXISTS "sso_consumed_assertions";

DROP TABLE IF EXISTS "sso_login_states";
