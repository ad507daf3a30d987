-- 0001_baseline (postgres, up): frozen by `npm run migrate -- freeze 0001_baseline`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "agent_sessions" (
  "id" serial PRIMARY KEY,
  "session_id" varchar(64) NOT NULL CONSTRAINT "agent_sessions_session_id_unique" UNIQUE,
  "tenant_id" integer NOT NULL DEFAULT 1,
  "session_type" varchar(30) NOT NULL DEFAULT 'chat',
  "title" text,
  "tool_name" varchar(100) NOT NULL,
  "host_name" varchar(255) NOT NULL DEFAULT 'localhost',
  "user_id" integer,
  "status" varchar(20) NOT NULL DEFAULT 'active',
  "total_tokens" bigint NOT NULL DEFAULT 0,
  "total_input_tokens" bigint NOT NULL DEFAULT 0,
  "total_output_tokens" bigint NOT NULL DEFAULT 0,
  "message_count" bigint NOT NULL DEFAULT 0,
  "request_count" bigint NOT NULL DEFAULT 0,
  "model" varchar(100),
  "project_id" integer,
  "project_path" varchar(500),
  "context" text,
  "settings" text,
  "tags" text,
  "created_at" timestamp with time zone NOT NULL DEFAULT now(),
  "updated_at" timestamp with time zone NOT NULL DEFAULT now(),
  "completed_at" timestamp with time zone,
  "expires_at" timestamp with time zone
);

CREATE INDEX IF NOT EXISTS "agent_sessions_user" ON "agent_sessions" ("user_id");

CREATE INDEX IF NOT EXISTS "agent_sessions_tenant" ON "agent_sessions" ("tenant_id");

CREATE TABLE IF NOT EXISTS "alerts" (
  "id" serial PRIMARY KEY,
  "alert_id" varchar(64) NOT NULL CONSTRAINT "alerts_alert_id_unique" UNIQUE,
  "alert_type" varchar(50),
  "severity" varchar(20) NOT NULL DEFAULT 'info',
  "title" text NOT NULL,
  "message" text,
  "user_id" integer,
  "tenant_id" integer,
  "read" boolean NOT NULL DEFAULT false,
  "created_at" timestamp with time zone NOT NULL DEFAULT now()
);

CREATE INDEX IF NOT EXISTS "alerts_user" ON "alerts" ("user_id");

CREATE TABLE IF NOT EXISTS "anomaly_status" (
  "id" serial PRIMARY KEY,
  "anomaly_type" varchar(50),
  "affected_users_hash" varchar(128),
  "status" varchar(20),
  "processed_by" integer,
  "processed_at" timestamp with time zone,
  "created_at" timestamp with time zone NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS "audit_logs" (
  "id" serial PRIMARY KEY,
  "timestamp" timestamp with time zone NOT NULL DEFAULT now(),
  "user_id" integer,
  "tenant_id" integer,
  "username" varchar(100),
  "action" varchar(100) NOT NULL,
  "severity" varchar(20) NOT NULL DEFAULT 'info',
  "resource_type" varchar(50),
  "resource_id" varchar(128),
  "details" text,
  "ip_address" varchar(64),
  "success" boolean NOT NULL DEFAULT true,
  "request_id" varchar(64),
  "target_tenant_id" integer
);

CREATE INDEX IF NOT EXISTS "audit_logs_timestamp" ON "audit_logs" ("timestamp");

CREATE INDEX IF NOT EXISTS "audit_logs_tenant" ON "audit_logs" ("tenant_id");

CREATE INDEX IF NOT EXISTS "audit_logs_user" ON "audit_logs" ("user_id");

CREATE TABLE IF NOT EXISTS "content_filter_rules" (
  "id" serial PRIMARY KEY,
  "pattern" text NOT NULL,
  "type" varchar(20) NOT NULL DEFAULT 'keyword',
  "severity" varchar(20) NOT NULL DEFAULT 'medium',
  "action" varchar(20) NOT NULL DEFAULT 'warn',
  "description" text,
  "is_enabled" boolean NOT NULL DEFAULT true,
  "tenant_id" integer,
  "created_at" timestamp with time zone NOT NULL DEFAULT now(),
  "updated_at" timestamp with time zone NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS "daily_messages" (
  "id" serial PRIMARY KEY,
  "date" varchar(10) NOT NULL,
  "tool_name" varchar(100) NOT NULL,
  "host_name" varchar(255) NOT NULL DEFAULT 'localhost',
  "message_id" varchar(255) NOT NULL,
  "parent_id" varchar(255),
  "role" varchar(20) NOT NULL,
  "content" text,
  "full_entry" text,
  "tokens_used" bigint NOT NULL DEFAULT 0,
  "input_tokens" bigint NOT NULL DEFAULT 0,
  "output_tokens" bigint NOT NULL DEFAULT 0,
  "model" varchar(100),
  "timestamp" timestamp with time zone,
  "sender_id" varchar(255),
  "sender_name" varchar(255),
  "message_source" varchar(50),
  "conversation_id" varchar(255),
  "agent_session_id" varchar(64),
  "user_id" integer,
  "project_path" varchar(500)
);

CREATE UNIQUE INDEX IF NOT EXISTS "daily_messages_natural_key" ON "daily_messages" ("date", "tool_name", "message_id", "host_name");

CREATE INDEX IF NOT EXISTS "daily_messages_session" ON "daily_messages" ("agent_session_id");

CREATE TABLE IF NOT EXISTS "daily_stats" (
  "id" serial PRIMARY KEY,
  "date" varchar(10) NOT NULL,
  "tool_name" varchar(100) NOT NULL,
  "host_name" varchar(255) NOT NULL DEFAULT 'localhost',
  "sender_name" varchar(255) NOT NULL DEFAULT '',
  "total_tokens" bigint NOT NULL DEFAULT 0,
  "total_input_tokens" bigint NOT NULL DEFAULT 0,
  "total_output_tokens" bigint NOT NULL DEFAULT 0,
  "message_count" bigint NOT NULL DEFAULT 0,
  "project_id" integer,
  "project_path" varchar(500)
);

CREATE UNIQUE INDEX IF NOT EXISTS "daily_stats_key" ON "daily_stats" ("date", "tool_name", "host_name", "sender_name");

CREATE TABLE IF NOT EXISTS "daily_usage" (
  "id" serial PRIMARY KEY,
  "tenant_id" integer NOT NULL DEFAULT 1,
  "date" varchar(10) NOT NULL,
  "tool_name" varchar(100) NOT NULL,
  "host_name" varchar(255) NOT NULL DEFAULT 'localhost',
  "tokens_used" bigint NOT NULL DEFAULT 0,
  "input_tokens" bigint NOT NULL DEFAULT 0,
  "output_tokens" bigint NOT NULL DEFAULT 0,
  "cache_tokens" bigint NOT NULL DEFAULT 0,
  "request_count" bigint NOT NULL DEFAULT 0,
  "models_used" text
);

CREATE UNIQUE INDEX IF NOT EXISTS "daily_usage_key" ON "daily_usage" ("tenant_id", "date", "tool_name", "host_name");

CREATE TABLE IF NOT EXISTS "hourly_stats" (
  "id" serial PRIMARY KEY,
  "date" varchar(10) NOT NULL,
  "hour" integer NOT NULL,
  "tool_name" varchar(100) NOT NULL,
  "host_name" varchar(255) NOT NULL DEFAULT 'localhost',
  "total_tokens" bigint NOT NULL DEFAULT 0,
  "total_input_tokens" bigint NOT NULL DEFAULT 0,
  "total_output_tokens" bigint NOT NULL DEFAULT 0,
  "message_count" bigint NOT NULL DEFAULT 0
);

CREATE UNIQUE INDEX IF NOT EXISTS "hourly_stats_key" ON "hourly_stats" ("date", "hour", "tool_name", "host_name");

CREATE TABLE IF NOT EXISTS "insights_reports" (
  "id" serial PRIMARY KEY,
  "user_id" integer,
  "start_date" varchar(10),
  "end_date" varchar(10),
  "overall_score" real,
  "overall_assessment" text,
  "strengths" text,
  "areas_for_improvement" text,
  "suggestions" text,
  "usage_summary" text,
  "model" varchar(100),
  "raw_response" text,
  "created_at" timestamp with time zone NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS "login_attempts" (
  "id" serial PRIMARY KEY,
  "username" varchar(100) NOT NULL CONSTRAINT "login_attempts_username_unique" UNIQUE,
  "attempt_count" integer NOT NULL DEFAULT 0,
  "locked_until" timestamp with time zone,
  "last_attempt_at" timestamp with time zone
);

CREATE TABLE IF NOT EXISTS "tenants" (
  "id" serial PRIMARY KEY,
  "name" text NOT NULL,
  "slug" varchar(100) CONSTRAINT "tenants_slug_unique" UNIQUE,
  "status" varchar(20) NOT NULL DEFAULT 'active',
  "plan" varchar(20) NOT NULL DEFAULT 'standard',
  "contact_email" text,
  "contact_name" text,
  "trial_ends_at" timestamp with time zone,
  "user_count" integer NOT NULL DEFAULT 0,
  "total_tokens_used" bigint NOT NULL DEFAULT 0,
  "created_at" timestamp with time zone NOT NULL DEFAULT now(),
  "updated_at" timestamp with time zone NOT NULL DEFAULT now(),
  "deleted_at" timestamp with time zone
);

CREATE TABLE IF NOT EXISTS "users" (
  "id" serial PRIMARY KEY,
  "username" varchar(100) NOT NULL CONSTRAINT "users_username_unique" UNIQUE,
  "password_hash" text NOT NULL,
  "email" text,
  "is_admin" boolean NOT NULL DEFAULT false,
  "is_active" boolean NOT NULL DEFAULT true,
  "role" varchar(20) NOT NULL DEFAULT 'user',
  "daily_token_quota" bigint,
  "monthly_token_quota" bigint,
  "daily_request_quota" bigint,
  "monthly_request_quota" bigint,
  "tenant_id" integer REFERENCES "tenants"("id") ON DELETE SET NULL,
  "must_change_password" boolean NOT NULL DEFAULT false,
  "system_account" text,
  "deleted_at" timestamp with time zone,
  "avatar_url" varchar(500),
  "last_login_at" timestamp with time zone,
  "created_at" timestamp with time zone NOT NULL DEFAULT now(),
  "updated_at" timestamp with time zone NOT NULL DEFAULT now()
);

CREATE INDEX IF NOT EXISTS "users_tenant" ON "users" ("tenant_id");

CREATE TABLE IF NOT EXISTS "notification_preferences" (
  "user_id" integer PRIMARY KEY REFERENCES "users"("id") ON DELETE CASCADE,
  "email_enabled" boolean NOT NULL DEFAULT true,
  "push_enabled" boolean NOT NULL DEFAULT true,
  "min_severity" varchar(20) NOT NULL DEFAULT 'warning',
  "webhook_url" text,
  "webhook_secret_encrypted" text,
  "updated_at" timestamp with time zone NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS "projects" (
  "id" serial PRIMARY KEY,
  "tenant_id" integer NOT NULL DEFAULT 1,
  "path" varchar(500) NOT NULL,
  "name" varchar(200),
  "description" text,
  "created_by" integer,
  "is_active" boolean NOT NULL DEFAULT true,
  "is_shared" boolean NOT NULL DEFAULT false,
  "created_at" timestamp with time zone NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS "prompt_templates" (
  "id" serial PRIMARY KEY,
  "name" varchar(200) NOT NULL,
  "description" text,
  "category" varchar(50) NOT NULL DEFAULT 'general',
  "content" text NOT NULL,
  "variables" text,
  "tags" text,
  "author_id" integer,
  "tenant_id" integer,
  "is_public" boolean NOT NULL DEFAULT false,
  "is_featured" boolean NOT NULL DEFAULT false,
  "use_count" integer NOT NULL DEFAULT 0,
  "created_at" timestamp with time zone NOT NULL DEFAULT now(),
  "updated_at" timestamp with time zone NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS "quota_alerts" (
  "id" serial PRIMARY KEY,
  "user_id" integer,
  "alert_type" varchar(50),
  "quota_type" varchar(50),
  "threshold" real,
  "current_usage" bigint NOT NULL DEFAULT 0,
  "quota_limit" bigint NOT NULL DEFAULT 0,
  "percentage" real,
  "acknowledged" boolean NOT NULL DEFAULT false,
  "created_at" timestamp with time zone NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS "quota_usage" (
  "id" serial PRIMARY KEY,
  "user_id" integer NOT NULL REFERENCES "users"("id") ON DELETE CASCADE,
  "date" varchar(10) NOT NULL,
  "period" varchar(10) NOT NULL DEFAULT 'daily',
  "tokens_used" bigint NOT NULL DEFAULT 0,
  "requests_used" bigint NOT NULL DEFAULT 0,
  "tokens_reserved" bigint NOT NULL DEFAULT 0,
  "requests_reserved" bigint NOT NULL DEFAULT 0,
  "updated_at" timestamp with time zone NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX IF NOT EXISTS "quota_usage_key" ON "quota_usage" ("user_id", "date", "period");

CREATE TABLE IF NOT EXISTS "role_permissions" (
  "id" serial PRIMARY KEY,
  "role" varchar(20) NOT NULL,
  "permission" varchar(50) NOT NULL
);

CREATE UNIQUE INDEX IF NOT EXISTS "role_permissions_role_perm" ON "role_permissions" ("role", "permission");

CREATE TABLE IF NOT EXISTS "security_settings" (
  "id" serial PRIMARY KEY,
  "setting_key" varchar(100) NOT NULL CONSTRAINT "security_settings_setting_key_unique" UNIQUE,
  "setting_value" text,
  "description" text,
  "updated_at" timestamp with time zone NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS "session_messages" (
  "id" serial PRIMARY KEY,
  "session_id" varchar(64) NOT NULL REFERENCES "agent_sessions"("session_id") ON DELETE CASCADE,
  "tenant_id" integer NOT NULL DEFAULT 1,
  "role" varchar(20) NOT NULL,
  "content" text,
  "tokens_used" bigint NOT NULL DEFAULT 0,
  "model" varchar(100),
  "timestamp" timestamp with time zone NOT NULL DEFAULT now(),
  "metadata" text
);

CREATE INDEX IF NOT EXISTS "session_messages_session" ON "session_messages" ("session_id");

CREATE TABLE IF NOT EXISTS "sessions" (
  "id" serial PRIMARY KEY,
  "token" varchar(128) NOT NULL CONSTRAINT "sessions_token_unique" UNIQUE,
  "user_id" integer NOT NULL REFERENCES "users"("id") ON DELETE CASCADE,
  "created_at" timestamp with time zone NOT NULL DEFAULT now(),
  "expires_at" timestamp with time zone NOT NULL,
  "is_active" boolean NOT NULL DEFAULT true,
  "ip_address" varchar(64),
  "user_agent" text
);

CREATE INDEX IF NOT EXISTS "sessions_user" ON "sessions" ("user_id");

CREATE TABLE IF NOT EXISTS "sso_identities" (
  "id" serial PRIMARY KEY,
  "user_id" integer NOT NULL,
  "provider_name" varchar(100) NOT NULL,
  "provider_user_id" varchar(255) NOT NULL,
  "created_at" timestamp with time zone NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX IF NOT EXISTS "sso_identities_key" ON "sso_identities" ("provider_name", "provider_user_id");

CREATE TABLE IF NOT EXISTS "sso_providers" (
  "id" serial PRIMARY KEY,
  "name" varchar(100) NOT NULL CONSTRAINT "sso_providers_name_unique" UNIQUE,
  "provider_type" varchar(10) NOT NULL,
  "config" text NOT NULL,
  "tenant_id" integer,
  "is_active" boolean NOT NULL DEFAULT true,
  "created_at" timestamp with time zone NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS "sso_sessions" (
  "id" serial PRIMARY KEY,
  "session_token" varchar(128) NOT NULL CONSTRAINT "sso_sessions_session_token_unique" UNIQUE,
  "user_id" integer NOT NULL,
  "provider_name" varchar(100) NOT NULL,
  "access_token" text,
  "refresh_token" text,
  "expires_at" timestamp with time zone
);

CREATE TABLE IF NOT EXISTS "tenant_quotas" (
  "tenant_id" integer PRIMARY KEY REFERENCES "tenants"("id") ON DELETE CASCADE,
  "daily_token_limit" bigint NOT NULL DEFAULT 1000000,
  "monthly_token_limit" bigint NOT NULL DEFAULT 30000000,
  "daily_request_limit" bigint NOT NULL DEFAULT 10000,
  "monthly_request_limit" bigint NOT NULL DEFAULT 300000,
  "max_users" integer NOT NULL DEFAULT 100,
  "max_sessions_per_user" integer NOT NULL DEFAULT 5,
  "updated_at" timestamp with time zone NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS "tenant_settings" (
  "tenant_id" integer PRIMARY KEY REFERENCES "tenants"("id") ON DELETE CASCADE,
  "content_filter_enabled" boolean NOT NULL DEFAULT true,
  "audit_log_enabled" boolean NOT NULL DEFAULT true,
  "audit_log_retention_days" integer NOT NULL DEFAULT 90,
  "data_retention_days" integer NOT NULL DEFAULT 365,
  "sso_enabled" boolean NOT NULL DEFAULT false,
  "updated_at" timestamp with time zone NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS "tenant_usage" (
  "id" serial PRIMARY KEY,
  "tenant_id" integer NOT NULL REFERENCES "tenants"("id") ON DELETE CASCADE,
  "date" varchar(10) NOT NULL,
  "tokens_used" bigint NOT NULL DEFAULT 0,
  "requests_made" bigint NOT NULL DEFAULT 0,
  "active_users" integer NOT NULL DEFAULT 0,
  "tokens_reserved" bigint NOT NULL DEFAULT 0,
  "requests_reserved" bigint NOT NULL DEFAULT 0
);

CREATE UNIQUE INDEX IF NOT EXISTS "tenant_usage_tenant_date" ON "tenant_usage" ("tenant_id", "date");

CREATE TABLE IF NOT EXISTS "usage_summary" (
  "id" serial PRIMARY KEY,
  "tool_name" varchar(100) NOT NULL,
  "host_name" varchar(255) NOT NULL DEFAULT 'localhost',
  "days_count" integer NOT NULL DEFAULT 0,
  "total_tokens" bigint NOT NULL DEFAULT 0,
  "avg_tokens" real NOT NULL DEFAULT 0,
  "total_requests" bigint NOT NULL DEFAULT 0,
  "total_input_tokens" bigint NOT NULL DEFAULT 0,
  "total_output_tokens" bigint NOT NULL DEFAULT 0,
  "first_date" varchar(10),
  "last_date" varchar(10)
);

CREATE UNIQUE INDEX IF NOT EXISTS "usage_summary_key" ON "usage_summary" ("tool_name", "host_name");

CREATE TABLE IF NOT EXISTS "user_daily_stats" (
  "id" serial PRIMARY KEY,
  "user_id" integer NOT NULL REFERENCES "users"("id") ON DELETE CASCADE,
  "date" varchar(10) NOT NULL,
  "requests" bigint NOT NULL DEFAULT 0,
  "tokens" bigint NOT NULL DEFAULT 0,
  "input_tokens" bigint NOT NULL DEFAULT 0,
  "output_tokens" bigint NOT NULL DEFAULT 0,
  "cache_tokens" bigint NOT NULL DEFAULT 0
);

CREATE UNIQUE INDEX IF NOT EXISTS "user_daily_stats_user_date" ON "user_daily_stats" ("user_id", "date");

CREATE TABLE IF NOT EXISTS "user_permissions" (
  "id" serial PRIMARY KEY,
  "user_id" integer NOT NULL REFERENCES "users"("id") ON DELETE CASCADE,
  "permission" varchar(50) NOT NULL,
  "granted_by" integer,
  "created_at" timestamp with time zone NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX IF NOT EXISTS "user_permissions_user_perm" ON "user_permissions" ("user_id", "permission");

CREATE TABLE IF NOT EXISTS "user_projects" (
  "id" serial PRIMARY KEY,
  "user_id" integer NOT NULL,
  "project_id" integer NOT NULL,
  "total_sessions" integer NOT NULL DEFAULT 0,
  "total_tokens" integer NOT NULL DEFAULT 0,
  "total_requests" integer NOT NULL DEFAULT 0
);

CREATE UNIQUE INDEX IF NOT EXISTS "user_projects_key" ON "user_projects" ("user_id", "project_id");

CREATE TABLE IF NOT EXISTS "user_tool_accounts" (
  "id" serial PRIMARY KEY,
  "user_id" integer NOT NULL REFERENCES "users"("id") ON DELETE CASCADE,
  "tool_account" varchar(255) NOT NULL CONSTRAINT "user_tool_accounts_tool_account_unique" UNIQUE,
  "tool_type" varchar(50),
  "description" varchar(255)
);

CREATE TABLE IF NOT EXISTS "web_user_auth_sessions" (
  "id" serial PRIMARY KEY,
  "user_id" integer NOT NULL REFERENCES "users"("id") ON DELETE CASCADE,
  "session_token" varchar(128) NOT NULL CONSTRAINT "web_user_auth_sessions_session_token_unique" UNIQUE,
  "created_at" timestamp with time zone NOT NULL DEFAULT now(),
  "expires_at" timestamp with time zone NOT NULL
);

CREATE MATERIALIZED VIEW IF NOT EXISTS session_stats AS 
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

CREATE UNIQUE INDEX IF NOT EXISTS session_stats_session ON session_stats (agent_session_id);
