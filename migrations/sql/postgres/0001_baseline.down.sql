-- 0001_baseline (postgres, down): frozen by `npm run migrate -- freeze 0001_baseline`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

DROP MATERIALIZED VIEW IF EXISTS session_stats;

DROP TABLE IF EXISTS "web_user_auth_sessions";

DROP TABLE IF EXISTS "user_tool_accounts";

DROP TABLE IF EXISTS "user_projects";

DROP TABLE IF EXISTS "user_permissions";

DROP TABLE IF EXISTS "user_daily_stats";

DROP TABLE IF EXISTS "usage_summary";

DROP TABLE IF EXISTS "tenant_usage";

DROP TABLE IF EXISTS "tenant_settings";

DROP TABLE IF EXISTS "tenant_quotas";

DROP TABLE IF EXISTS "sso_sessions";

DROP TABLE IF EXISTS "sso_providers";

DROP TABLE IF EXISTS "sso_identities";

DROP TABLE IF EXISTS "sessions";

DROP TABLE IF EXISTS "session_messages";

DROP TABLE IF EXISTS "security_settings";

DROP TABLE IF EXISTS "role_permissions";

DROP TABLE IF EXISTS "quota_usage";

DROP TABLE IF EXISTS "quota_alerts";

DROP TABLE IF EXISTS "prompt_templates";

DROP TABLE IF EXISTS "projects";

DROP TABLE IF EXISTS "notification_preferences";

DROP TABLE IF EXISTS "users";

DROP TABLE IF EXISTS "tenants";

DROP TABLE IF EXISTS "login_attempts";

DROP TABLE IF EXISTS "insights_reports";

DROP TABLE IF EXISTS "hourly_stats";

DROP TABLE IF EXISTS "daily_usage";

DROP TABLE IF EXISTS "daily_stats";

DROP TABLE IF EXISTS "daily_messages";

DROP TABLE IF EXISTS "content_filter_rules";

DROP TABLE IF EXISTS "audit_logs";

DROP TABLE IF EXISTS "anomaly_status";

DROP TABLE IF EXISTS "alerts";

DROP TABLE IF EXISTS "agent_sessions";
