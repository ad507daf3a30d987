-- 0001_baseline (sqlite, up): frozen by `npm run migrate -- freeze 0001_baseline`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "agent_sessions" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "session_id" TEXT NOT NULL CONSTRAINT "agent_sessions_session_id_unique" UNIQUE,
  "tenant_id" INTEGER NOT NULL DEFAULT 1,
  "session_type" TEXT NOT NULL DEFAULT 'chat',
  "title" TEXT,
  "tool_name" TEXT NOT NULL,
  "host_name" TEXT NOT NULL DEFAULT 'localhost',
  "user_id" INTEGER,
  "status" TEXT NOT NULL DEFAULT 'active',
  "total_tokens" INTEGER NOT NULL DEFAULT 0,
  "total_input_tokens" INTEGER NOT NULL DEFAULT 0,
  "total_output_tokens" INTEGER NOT NULL DEFAULT 0,
  "message_count" INTEGER NOT NULL DEFAULT 0,
  "request_count" INTEGER NOT NULL DEFAULT 0,
  "model" TEXT,
  "project_id" INTEGER,
  "project_path" TEXT,
  "context" TEXT,
  "settings" TEXT,
  "tags" TEXT,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "updated_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "completed_at" INTEGER,
  "expires_at" INTEGER
);

CREATE INDEX IF NOT EXISTS "agent_sessions_user" ON "agent_sessions" ("user_id");

CREATE INDEX IF NOT EXISTS "agent_sessions_tenant" ON "agent_sessions" ("tenant_id");

CREATE TABLE IF NOT EXISTS "alerts" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "alert_id" TEXT NOT NULL CONSTRAINT "alerts_alert_id_unique" UNIQUE,
  "alert_type" TEXT,
  "severity" TEXT NOT NULL DEFAULT 'info',
  "title" TEXT NOT NULL,
  "message" TEXT,
  "user_id" INTEGER,
  "tenant_id" INTEGER,
  "read" INTEGER NOT NULL DEFAULT 0,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer))
);

CREATE INDEX IF NOT EXISTS "alerts_user" ON "alerts" ("user_id");

CREATE TABLE IF NOT EXISTS "anomaly_status" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "anomaly_type" TEXT,
  "affected_users_hash" TEXT,
  "status" TEXT,
  "processed_by" INTEGER,
  "processed_at" INTEGER,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer))
);

CREATE TABLE IF NOT EXISTS "audit_logs" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "timestamp" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "user_id" INTEGER,
  "tenant_id" INTEGER,
  "username" TEXT,
  "action" TEXT NOT NULL,
  "severity" TEXT NOT NULL DEFAULT 'info',
  "resource_type" TEXT,
  "resource_id" TEXT,
  "details" TEXT,
  "ip_address" TEXT,
  "success" INTEGER NOT NULL DEFAULT 1,
  "request_id" TEXT,
  "target_tenant_id" INTEGER
);

CREATE INDEX IF NOT EXISTS "audit_logs_timestamp" ON "audit_logs" ("timestamp");

CREATE INDEX IF NOT EXISTS "audit_logs_tenant" ON "audit_logs" ("tenant_id");

CREATE INDEX IF NOT EXISTS "audit_logs_user" ON "audit_logs" ("user_id");

CREATE TABLE IF NOT EXISTS "content_filter_rules" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "pattern" TEXT NOT NULL,
  "type" TEXT NOT NULL DEFAULT 'keyword',
  "severity" TEXT NOT NULL DEFAULT 'medium',
  "action" TEXT NOT NULL DEFAULT 'warn',
  "description" TEXT,
  "is_enabled" INTEGER NOT NULL DEFAULT 1,
  "tenant_id" INTEGER,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "updated_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer))
);

CREATE TABLE IF NOT EXISTS "daily_messages" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "date" TEXT NOT NULL,
  "tool_name" TEXT NOT NULL,
  "host_name" TEXT NOT NULL DEFAULT 'localhost',
  "message_id" TEXT NOT NULL,
  "parent_id" TEXT,
  "role" TEXT NOT NULL,
  "content" TEXT,
  "full_entry" TEXT,
  "tokens_used" INTEGER NOT NULL DEFAULT 0,
  "input_tokens" INTEGER NOT NULL DEFAULT 0,
  "output_tokens" INTEGER NOT NULL DEFAULT 0,
  "model" TEXT,
  "timestamp" INTEGER,
  "sender_id" TEXT,
  "sender_name" TEXT,
  "message_source" TEXT,
  "conversation_id" TEXT,
  "agent_session_id" TEXT,
  "user_id" INTEGER,
  "project_path" TEXT
);

CREATE UNIQUE INDEX IF NOT EXISTS "daily_messages_natural_key" ON "daily_messages" ("date", "tool_name", "message_id", "host_name");

CREATE INDEX IF NOT EXISTS "daily_messages_session" ON "daily_messages" ("agent_session_id");

CREATE TABLE IF NOT EXISTS "daily_stats" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "date" TEXT NOT NULL,
  "tool_name" TEXT NOT NULL,
  "host_name" TEXT NOT NULL DEFAULT 'localhost',
  "sender_name" TEXT NOT NULL DEFAULT '',
  "total_tokens" INTEGER NOT NULL DEFAULT 0,
  "total_input_tokens" INTEGER NOT NULL DEFAULT 0,
  "total_output_tokens" INTEGER NOT NULL DEFAULT 0,
  "message_count" INTEGER NOT NULL DEFAULT 0,
  "project_id" INTEGER,
  "project_path" TEXT
);

CREATE UNIQUE INDEX IF NOT EXISTS "daily_stats_key" ON "daily_stats" ("date", "tool_name", "host_name", "sender_name");

CREATE TABLE IF NOT EXISTS "daily_usage" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "tenant_id" INTEGER NOT NULL DEFAULT 1,
  "date" TEXT NOT NULL,
  "tool_name" TEXT NOT NULL,
  "host_name" TEXT NOT NULL DEFAULT 'localhost',
  "tokens_used" INTEGER NOT NULL DEFAULT 0,
  "input_tokens" INTEGER NOT NULL DEFAULT 0,
  "output_tokens" INTEGER NOT NULL DEFAULT 0,
  "cache_tokens" INTEGER NOT NULL DEFAULT 0,
  "request_count" INTEGER NOT NULL DEFAULT 0,
  "models_used" TEXT
);

CREATE UNIQUE INDEX IF NOT EXISTS "daily_usage_key" ON "daily_usage" ("tenant_id", "date", "tool_name", "host_name");

CREATE TABLE IF NOT EXISTS "hourly_stats" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "date" TEXT NOT NULL,
  "hour" INTEGER NOT NULL,
  "tool_name" TEXT NOT NULL,
  "host_name" TEXT NOT NULL DEFAULT 'localhost',
  "total_tokens" INTEGER NOT NULL DEFAULT 0,
  "total_input_tokens" INTEGER NOT NULL DEFAULT 0,
  "total_output_tokens" INTEGER NOT NULL DEFAULT 0,
  "message_count" INTEGER NOT NULL DEFAULT 0
);

CREATE UNIQUE INDEX IF NOT EXISTS "hourly_stats_key" ON "hourly_stats" ("date", "hour", "tool_name", "host_name");

CREATE TABLE IF NOT EXISTS "insights_reports" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "user_id" INTEGER,
  "start_date" TEXT,
  "end_date" TEXT,
  "overall_score" REAL,
  "overall_assessment" TEXT,
  "strengths" TEXT,
  "areas_for_improvement" TEXT,
  "suggestions" TEXT,
  "usage_summary" TEXT,
  "model" TEXT,
  "raw_response" TEXT,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer))
);

CREATE TABLE IF NOT EXISTS "login_attempts" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "username" TEXT NOT NULL CONSTRAINT "login_attempts_username_unique" UNIQUE,
  "attempt_count" INTEGER NOT NULL DEFAULT 0,
  "locked_until" INTEGER,
  "last_attempt_at" INTEGER
);

CREATE TABLE IF NOT EXISTS "tenants" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "name" TEXT NOT NULL,
  "slug" TEXT CONSTRAINT "tenants_slug_unique" UNIQUE,
  "status" TEXT NOT NULL DEFAULT 'active',
  "plan" TEXT NOT NULL DEFAULT 'standard',
  "contact_email" TEXT,
  "contact_name" TEXT,
  "trial_ends_at" INTEGER,
  "user_count" INTEGER NOT NULL DEFAULT 0,
  "total_tokens_used" INTEGER NOT NULL DEFAULT 0,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "updated_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "deleted_at" INTEGER
);

CREATE TABLE IF NOT EXISTS "users" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "username" TEXT NOT NULL CONSTRAINT "users_username_unique" UNIQUE,
  "password_hash" TEXT NOT NULL,
  "email" TEXT,
  "is_admin" INTEGER NOT NULL DEFAULT 0,
  "is_active" INTEGER NOT NULL DEFAULT 1,
  "role" TEXT NOT NULL DEFAULT 'user',
  "daily_token_quota" INTEGER,
  "monthly_token_quota" INTEGER,
  "daily_request_quota" INTEGER,
  "monthly_request_quota" INTEGER,
  "tenant_id" INTEGER REFERENCES "tenants"("id") ON DELETE SET NULL,
  "must_change_password" INTEGER NOT NULL DEFAULT 0,
  "system_account" TEXT,
  "deleted_at" INTEGER,
  "avatar_url" TEXT,
  "last_login_at" INTEGER,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "updated_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer))
);

CREATE INDEX IF NOT EXISTS "users_tenant" ON "users" ("tenant_id");

CREATE TABLE IF NOT EXISTS "notification_preferences" (
  "user_id" INTEGER PRIMARY KEY REFERENCES "users"("id") ON DELETE CASCADE,
  "email_enabled" INTEGER NOT NULL DEFAULT 1,
  "push_enabled" INTEGER NOT NULL DEFAULT 1,
  "min_severity" TEXT NOT NULL DEFAULT 'warning',
  "webhook_url" TEXT,
  "webhook_secret_encrypted" TEXT,
  "updated_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer))
);

CREATE TABLE IF NOT EXISTS "projects" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "tenant_id" INTEGER NOT NULL DEFAULT 1,
  "path" TEXT NOT NULL,
  "name" TEXT,
  "description" TEXT,
  "created_by" INTEGER,
  "is_active" INTEGER NOT NULL DEFAULT 1,
  "is_shared" INTEGER NOT NULL DEFAULT 0,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer))
);

CREATE TABLE IF NOT EXISTS "prompt_templates" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "name" TEXT NOT NULL,
  "description" TEXT,
  "category" TEXT NOT NULL DEFAULT 'general',
  "content" TEXT NOT NULL,
  "variables" TEXT,
  "tags" TEXT,
  "author_id" INTEGER,
  "tenant_id" INTEGER,
  "is_public" INTEGER NOT NULL DEFAULT 0,
  "is_featured" INTEGER NOT NULL DEFAULT 0,
  "use_count" INTEGER NOT NULL DEFAULT 0,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "updated_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer))
);

CREATE TABLE IF NOT EXISTS "quota_alerts" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "user_id" INTEGER,
  "alert_type" TEXT,
  "quota_type" TEXT,
  "threshold" REAL,
  "current_usage" INTEGER NOT NULL DEFAULT 0,
  "quota_limit" INTEGER NOT NULL DEFAULT 0,
  "percentage" REAL,
  "acknowledged" INTEGER NOT NULL DEFAULT 0,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer))
);

CREATE TABLE IF NOT EXISTS "quota_usage" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "user_id" INTEGER NOT NULL REFERENCES "users"("id") ON DELETE CASCADE,
  "date" TEXT NOT NULL,
  "period" TEXT NOT NULL DEFAULT 'daily',
  "tokens_used" INTEGER NOT NULL DEFAULT 0,
  "requests_used" INTEGER NOT NULL DEFAULT 0,
  "tokens_reserved" INTEGER NOT NULL DEFAULT 0,
  "requests_reserved" INTEGER NOT NULL DEFAULT 0,
  "updated_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer))
);

CREATE UNIQUE INDEX IF NOT EXISTS "quota_usage_key" ON "quota_usage" ("user_id", "date", "period");

CREATE TABLE IF NOT EXISTS "role_permissions" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "role" TEXT NOT NULL,
  "permission" TEXT NOT NULL
);

CREATE UNIQUE INDEX IF NOT EXISTS "role_permissions_role_perm" ON "role_permissions" ("role", "permission");

CREATE TABLE IF NOT EXISTS "security_settings" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "setting_key" TEXT NOT NULL CONSTRAINT "security_settings_setting_key_unique" UNIQUE,
  "setting_value" TEXT,
  "description" TEXT,
  "updated_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer))
);

CREATE TABLE IF NOT EXISTS "session_messages" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "session_id" TEXT NOT NULL REFERENCES "agent_sessions"("session_id") ON DELETE CASCADE,
  "tenant_id" INTEGER NOT NULL DEFAULT 1,
  "role" TEXT NOT NULL,
  "content" TEXT,
  "tokens_used" INTEGER NOT NULL DEFAULT 0,
  "model" TEXT,
  "timestamp" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "metadata" TEXT
);

CREATE INDEX IF NOT EXISTS "session_messages_session" ON "session_messages" ("session_id");

CREATE TABLE IF NOT EXISTS "sessions" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "token" TEXT NOT NULL CONSTRAINT "sessions_token_unique" UNIQUE,
  "user_id" INTEGER NOT NULL REFERENCES "users"("id") ON DELETE CASCADE,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "expires_at" INTEGER NOT NULL,
  "is_active" INTEGER NOT NULL DEFAULT 1,
  "ip_address" TEXT,
  "user_agent" TEXT
);

CREATE INDEX IF NOT EXISTS "sessions_user" ON "sessions" ("user_id");

CREATE TABLE IF NOT EXISTS "sso_identities" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "user_id" INTEGER NOT NULL,
  "provider_name" TEXT NOT NULL,
  "provider_user_id" TEXT NOT NULL,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer))
);

CREATE UNIQUE INDEX IF NOT EXISTS "sso_identities_key" ON "sso_identities" ("provider_name", "provider_user_id");

CREATE TABLE IF NOT EXISTS "sso_providers" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "name" TEXT NOT NULL CONSTRAINT "sso_providers_name_unique" UNIQUE,
  "provider_type" TEXT NOT NULL,
  "config" TEXT NOT NULL,
  "tenant_id" INTEGER,
  "is_active" INTEGER NOT NULL DEFAULT 1,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer))
);

CREATE TABLE IF NOT EXISTS "sso_sessions" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "session_token" TEXT NOT NULL CONSTRAINT "sso_sessions_session_token_unique" UNIQUE,
  "user_id" INTEGER NOT NULL,
  "provider_name" TEXT NOT NULL,
  "access_token" TEXT,
  "refresh_token" TEXT,
  "expires_at" INTEGER
);

CREATE TABLE IF NOT EXISTS "tenant_quotas" (
  "tenant_id" INTEGER PRIMARY KEY REFERENCES "tenants"("id") ON DELETE CASCADE,
  "daily_token_limit" INTEGER NOT NULL DEFAULT 1000000,
  "monthly_token_limit" INTEGER NOT NULL DEFAULT 30000000,
  "daily_request_limit" INTEGER NOT NULL DEFAULT 10000,
  "monthly_request_limit" INTEGER NOT NULL DEFAULT 300000,
  "max_users" INTEGER NOT NULL DEFAULT 100,
  "max_sessions_per_user" INTEGER NOT NULL DEFAULT 5,
  "updated_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer))
);

CREATE TABLE IF NOT EXISTS "tenant_settings" (
  "tenant_id" INTEGER PRIMARY KEY REFERENCES "tenants"("id") ON DELETE CASCADE,
  "content_filter_enabled" INTEGER NOT NULL DEFAULT 1,
  "audit_log_enabled" INTEGER NOT NULL DEFAULT 1,
  "audit_log_retention_days" INTEGER NOT NULL DEFAULT 90,
  "data_retention_days" INTEGER NOT NULL DEFAULT 365,
  "sso_enabled" INTEGER NOT NULL DEFAULT 0,
  "updated_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer))
);

CREATE TABLE IF NOT EXISTS "tenant_usage" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "tenant_id" INTEGER NOT NULL REFERENCES "tenants"("id") ON DELETE CASCADE,
  "date" TEXT NOT NULL,
  "tokens_used" INTEGER NOT NULL DEFAULT 0,
  "requests_made" INTEGER NOT NULL DEFAULT 0,
  "active_users" INTEGER NOT NULL DEFAULT 0,
  "tokens_reserved" INTEGER NOT NULL DEFAULT 0,
  "requests_reserved" INTEGER NOT NULL DEFAULT 0
);

CREATE UNIQUE INDEX IF NOT EXISTS "tenant_usage_tenant_date" ON "tenant_usage" ("tenant_id", "date");

CREATE TABLE IF NOT EXISTS "usage_summary" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "tool_name" TEXT NOT NULL,
  "host_name" TEXT NOT NULL DEFAULT 'localhost',
  "days_count" INTEGER NOT NULL DEFAULT 0,
  "total_tokens" INTEGER NOT NULL DEFAULT 0,
  "avg_tokens" REAL NOT NULL DEFAULT 0,
  "total_requests" INTEGER NOT NULL DEFAULT 0,
  "total_input_tokens" INTEGER NOT NULL DEFAULT 0,
  "total_output_tokens" INTEGER NOT NULL DEFAULT 0,
  "first_date" TEXT,
  "last_date" TEXT
);

CREATE UNIQUE INDEX IF NOT EXISTS "usage_summary_key" ON "usage_summary" ("tool_name", "host_name");

CREATE TABLE IF NOT EXISTS "user_daily_stats" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "user_id" INTEGER NOT NULL REFERENCES "users"("id") ON DELETE CASCADE,
  "date" TEXT NOT NULL,
  "requests" INTEGER NOT NULL DEFAULT 0,
  "tokens" INTEGER NOT NULL DEFAULT 0,
  "input_tokens" INTEGER NOT NULL DEFAULT 0,
  "output_tokens" INTEGER NOT NULL DEFAULT 0,
  "cache_tokens" INTEGER NOT NULL DEFAULT 0
);

CREATE UNIQUE INDEX IF NOT EXISTS "user_daily_stats_user_date" ON "user_daily_stats" ("user_id", "date");

CREATE TABLE IF NOT EXISTS "user_permissions" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "user_id" INTEGER NOT NULL REFERENCES "users"("id") ON DELETE CASCADE,
  "permission" TEXT NOT NULL,
  "granted_by" INTEGER,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer))
);

CREATE UNIQUE INDEX IF NOT EXISTS "user_permissions_user_perm" ON "user_permissions" ("user_id", "permission");

CREATE TABLE IF NOT EXISTS "user_projects" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "user_id" INTEGER NOT NULL,
  "project_id" INTEGER NOT NULL,
  "total_sessions" INTEGER NOT NULL DEFAULT 0,
  "total_tokens" INTEGER NOT NULL DEFAULT 0,
  "total_requests" INTEGER NOT NULL DEFAULT 0
);

CREATE UNIQUE INDEX IF NOT EXISTS "user_projects_key" ON "user_projects" ("user_id", "project_id");

CREATE TABLE IF NOT EXISTS "user_tool_accounts" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "user_id" INTEGER NOT NULL REFERENCES "users"("id") ON DELETE CASCADE,
  "tool_account" TEXT NOT NULL CONSTRAINT "user_tool_accounts_tool_account_unique" UNIQUE,
  "tool_type" TEXT,
  "description" TEXT
);

CREATE TABLE IF NOT EXISTS "web_user_auth_sessions" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "user_id" INTEGER NOT NULL REFERENCES "users"("id") ON DELETE CASCADE,
  "session_token" TEXT NOT NULL CONSTRAINT "web_user_auth_sessions_session_token_unique" UNIQUE,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "expires_at" INTEGER NOT NULL
);

CREATE VIEW IF NOT EXISTS session_stats AS 
  SELECT agent_session_id,
         COUNT(*) AS message_count,
         COALESCE(SUM(tokens_used), 0) AS total_tokens,
         COALESCE(SUM(input_tokens), 0) AS total_input_tokens,
         COALESCE(SUM(output_tokens), 0) AS total_output_tokens,
         MIN(timestamp) AS first_message_at,
         MAX(timestamp) AS last_message_at
    FROM daily_messages
   WHERE agent_session_id IS NOT NULL
   GROUP BY agent_session_id;
