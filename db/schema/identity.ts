import { bigint, index, integer, pgTable, uniqueIndex } from 'drizzle-orm/pg-core';
import { bool, counter, createdAt, day, id, int, str, ts, txt, updatedAt } from './columns.ts';

export const tenants = pgTable('tenants', {
  id: id(),
  name: txt('name').notNull(),
  slug: str('slug', 100).unique(),
  status: str('status', 20).notNull().default('active'),
  plan: str('plan', 20).notNull().default('standard'),
  contactEmail: txt('contact_email'),
  contactName: txt('contact_name'),
  trialEndsAt: ts('trial_ends_at'),
  userCount: integer('user_count').notNull().default(0),
  totalTokensUsed: counter('total_tokens_used'),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
  deletedAt: ts('deleted_at'),
});

export const tenantSettings = pgTable('tenant_settings', {
  tenantId: integer('tenant_id')
    .primaryKey()
    .references(() => tenants.id, { onDelete: 'cascade' }),
  contentFilterEnabled: bool('content_filter_enabled', true),
  auditLogEnabled: bool('audit_log_enabled', true),
  auditLogRetentionDays: integer('audit_log_retention_days').notNull().default(90),
  dataRetentionDays: integer('data_retention_days').notNull().default(365),
  ssoEnabled: bool('sso_enabled', false),
  updatedAt: updatedAt(),
});

export const tenantQuotas = pgTable('tenant_quotas', {
  tenantId: integer('tenant_id')
    .primaryKey()
    .references(() => tenants.id, { onDelete: 'cascade' }),
  dailyTokenLimit: bigint('daily_token_limit', { mode: 'number' }).notNull().default(1_000_000),
  monthlyTokenLimit: bigint('monthly_token_limit', { mode: 'number' }).notNull().default(30_000_000),
  dailyRequestLimit: bigint('daily_request_limit', { mode: 'number' }).notNull().default(10_000),
  monthlyRequestLimit: bigint('monthly_request_limit', { mode: 'number' }).notNull().default(300_000),
  maxUsers: integer('max_users').notNull().default(100),
  maxSessionsPerUser: integer('max_sessions_per_user').notNull().default(5),
  updatedAt: updatedAt(),
});

/** One row per tenant and day; `*_reserved` hold in-flight proxy requests (reserve, then reconcile). */
export const tenantUsage = pgTable(
  'tenant_usage',
  {
    id: id(),
    tenantId: integer('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    date: day().notNull(),
    tokensUsed: counter('tokens_used'),
    requestsMade: counter('requests_made'),
    activeUsers: integer('active_users').notNull().default(0),
    tokensReserved: counter('tokens_reserved'),
    requestsReserved: counter('requests_reserved'),
  },
  (t) => [uniqueIndex('tenant_usage_tenant_date').on(t.tenantId, t.date)],
);

export const users = pgTable(
  'users',
  {
    id: id(),
    username: str('username', 100).notNull().unique(),
    passwordHash: txt('password_hash').notNull(),
    email: txt('email'),
    isAdmin: bool('is_admin', false),
    isActive: bool('is_active', true),
    role: str('role', 20).notNull().default('user'),
    /** Unit: millions of tokens (spec rule 2). Null = no personal limit. */
    dailyTokenQuota: bigint('daily_token_quota', { mode: 'number' }),
    monthlyTokenQuota: bigint('monthly_token_quota', { mode: 'number' }),
    dailyRequestQuota: bigint('daily_request_quota', { mode: 'number' }),
    monthlyRequestQuota: bigint('monthly_request_quota', { mode: 'number' }),
    tenantId: integer('tenant_id').references(() => tenants.id, { onDelete: 'set null' }),
    mustChangePassword: bool('must_change_password', false),
    systemAccount: txt('system_account'),
    deletedAt: ts('deleted_at'),
    avatarUrl: str('avatar_url', 500),
    lastLoginAt: ts('last_login_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('users_tenant').on(t.tenantId)],
);

/** Auth sessions. `token` holds the SHA-256 of the session token, never the token itself. */
export const sessions = pgTable(
  'sessions',
  {
    id: id(),
    token: str('token', 128).notNull().unique(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: createdAt(),
    expiresAt: ts('expires_at').notNull(),
    isActive: bool('is_active', true),
    ipAddress: str('ip_address', 64),
    userAgent: txt('user_agent'),
  },
  (t) => [index('sessions_user').on(t.userId)],
);

export const webUserAuthSessions = pgTable('web_user_auth_sessions', {
  id: id(),
  userId: integer('user_id')
    .notNull()
    .references(() => users.id, { onDelete: 'cascade' }),
  sessionToken: str('session_token', 128).notNull().unique(),
  createdAt: createdAt(),
  expiresAt: ts('expires_at').notNull(),
});

export const userToolAccounts = pgTable('user_tool_accounts', {
  id: id(),
  userId: integer('user_id')
    .notNull()
    .references(() => users.id, { onDelete: 'cascade' }),
  toolAccount: str('tool_account', 255).notNull().unique(),
  toolType: str('tool_type', 50),
  description: str('description', 255),
});

export const userDailyStats = pgTable(
  'user_daily_stats',
  {
    id: id(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    date: day().notNull(),
    requests: counter('requests'),
    tokens: counter('tokens'),
    inputTokens: counter('input_tokens'),
    outputTokens: counter('output_tokens'),
    cacheTokens: counter('cache_tokens'),
  },
  (t) => [uniqueIndex('user_daily_stats_user_date').on(t.userId, t.date)],
);

export const loginAttempts = pgTable('login_attempts', {
  id: id(),
  username: str('username', 100).notNull().unique(),
  attemptCount: integer('attempt_count').notNull().default(0),
  lockedUntil: ts('locked_until'),
  lastAttemptAt: ts('last_attempt_at'),
});

export const rolePermissions = pgTable(
  'role_permissions',
  { id: id(), role: str('role', 20).notNull(), permission: str('permission', 50).notNull() },
  (t) => [uniqueIndex('role_permissions_role_perm').on(t.role, t.permission)],
);

export const userPermissions = pgTable(
  'user_permissions',
  {
    id: id(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    permission: str('permission', 50).notNull(),
    grantedBy: int('granted_by'),
    grantedAt: createdAt(),
  },
  (t) => [uniqueIndex('user_permissions_user_perm').on(t.userId, t.permission)],
);

export const securitySettings = pgTable('security_settings', {
  id: id(),
  settingKey: str('setting_key', 100).notNull().unique(),
  settingValue: txt('setting_value'),
  description: txt('description'),
  updatedAt: updatedAt(),
});

export const auditLogs = pgTable(
  'audit_logs',
  {
    id: id(),
    timestamp: ts('timestamp').notNull().defaultNow(),
    userId: int('user_id'),
    tenantId: int('tenant_id'),
    username: str('username', 100),
    action: str('action', 100).notNull(),
    severity: str('severity', 20).notNull().default('info'),
    resourceType: str('resource_type', 50),
    resourceId: str('resource_id', 128),
    /** JSON text */
    details: txt('details'),
    ipAddress: str('ip_address', 64),
    success: bool('success', true),
    requestId: str('request_id', 64),
    targetTenantId: int('target_tenant_id'),
  },
  (t) => [
    index('audit_logs_timestamp').on(t.timestamp),
    index('audit_logs_tenant').on(t.tenantId),
    index('audit_logs_user').on(t.userId),
  ],
);
