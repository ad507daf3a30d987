import { sql } from 'drizzle-orm';
import { index, integer, pgTable, real, uniqueIndex } from 'drizzle-orm/pg-core';
import { bool, counter, createdAt, day, id, int, str, ts, txt, updatedAt } from './columns.ts';
import { tenants, users } from './identity.ts';

export const dailyMessages = pgTable(
  'daily_messages',
  {
    id: id(),
    date: day().notNull(),
    toolName: str('tool_name', 100).notNull(),
    hostName: str('host_name', 255).notNull().default('localhost'),
    messageId: str('message_id', 255).notNull(),
    parentId: str('parent_id', 255),
    role: str('role', 20).notNull(),
    content: txt('content'),
    fullEntry: txt('full_entry'),
    tokensUsed: counter('tokens_used'),
    inputTokens: counter('input_tokens'),
    outputTokens: counter('output_tokens'),
    model: str('model', 100),
    timestamp: ts('timestamp'),
    senderId: str('sender_id', 255),
    senderName: str('sender_name', 255),
    messageSource: str('message_source', 50),
    conversationId: str('conversation_id', 255),
    agentSessionId: str('agent_session_id', 64),
    userId: int('user_id'),
    projectPath: str('project_path', 500),
    /**
     * Added by 0013_usage_read_model: the tenant the message counts for (its user's tenant, or 1 for
     * unknown senders), so tenant-scoped reads (spec rule 5) need no join. Full-text search over
     * `content` lives beside the table (db/full-text.ts), created by raw SQL in the same revision.
     */
    tenantId: integer('tenant_id').notNull().default(1),
    /**
     * Added by 0015_content_filter: the content filter's verdict for an uploaded message of a tenant
     * with content_filter_enabled (`blocked`, `review`, `warn`); null when unchecked or clean. A
     * blocked message is stored flagged, never dropped.
     */
    filterVerdict: str('filter_verdict', 20),
    /**
     * Added by 0041_alert_reads: the rules behind `filter_verdict`, as JSON
     * `[{rule_id, type, action, severity, description}]`, so the message can say why it was flagged.
     */
    filterRules: txt('filter_rules'),
  },
  (t) => [
    uniqueIndex('daily_messages_natural_key').on(t.date, t.toolName, t.messageId, t.hostName),
    index('daily_messages_session').on(t.agentSessionId),
    index('daily_messages_tenant_date').on(t.tenantId, t.date),
    index('daily_messages_user_date').on(t.userId, t.date),
    // Added by 0014_usage_read_indexes: request counts (rule 3) read from partial indexes over the
    // assistant messages alone; conversations by conversation_id.
    index('daily_messages_requests_tenant')
      .on(t.tenantId, t.toolName, t.hostName, t.date)
      .where(sql`role = 'assistant'`),
    index('daily_messages_requests_date')
      .on(t.date, t.tenantId, t.toolName, t.hostName)
      .where(sql`role = 'assistant'`),
    index('daily_messages_conversation').on(t.conversationId).where(sql`conversation_id IS NOT NULL`),
  ],
);

export const agentSessions = pgTable(
  'agent_sessions',
  {
    id: id(),
    sessionId: str('session_id', 64).notNull().unique(),
    tenantId: integer('tenant_id').notNull().default(1),
    sessionType: str('session_type', 30).notNull().default('chat'),
    title: txt('title'),
    toolName: str('tool_name', 100).notNull(),
    hostName: str('host_name', 255).notNull().default('localhost'),
    userId: int('user_id'),
    status: str('status', 20).notNull().default('active'),
    totalTokens: counter('total_tokens'),
    totalInputTokens: counter('total_input_tokens'),
    totalOutputTokens: counter('total_output_tokens'),
    messageCount: counter('message_count'),
    requestCount: counter('request_count'),
    model: str('model', 100),
    projectId: int('project_id'),
    projectPath: str('project_path', 500),
    /** JSON text */
    context: txt('context'),
    settings: txt('settings'),
    tags: txt('tags'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    completedAt: ts('completed_at'),
    expiresAt: ts('expires_at'),
    // Added by 0002_remote_workspace.
    workspaceType: str('workspace_type', 10).notNull().default('local'),
    remoteMachineId: str('remote_machine_id', 64),
    pausedAt: ts('paused_at'),
    /** Added by 0010_remote_machine_key: remote_machines.machine_key when the session was bound. */
    remoteMachineKey: str('remote_machine_key', 64),
    /**
     * Added by 0028_session_provider_error: the class of the last provider error the model proxy relayed
     * for this session (domain/proxy/provider-errors.ts), and when. Written on error responses only.
     */
    lastProviderError: str('last_provider_error', 30),
    lastProviderErrorAt: ts('last_provider_error_at'),
    /**
     * Added by 0040_session_cli_started: when the agent first reported the remote session's CLI process
     * started (its `started` system note). Null on a session whose CLI never started (the agent refused it, or
     * the spawn failed), so such a session is not called "completed" as if it had run.
     */
    cliStartedAt: ts('cli_started_at'),
  },
  (t) => [index('agent_sessions_user').on(t.userId), index('agent_sessions_tenant').on(t.tenantId)],
);

export const sessionMessages = pgTable(
  'session_messages',
  {
    id: id(),
    sessionId: str('session_id', 64)
      .notNull()
      .references(() => agentSessions.sessionId, { onDelete: 'cascade' }),
    tenantId: integer('tenant_id').notNull().default(1),
    role: str('role', 20).notNull(),
    content: txt('content'),
    tokensUsed: counter('tokens_used'),
    model: str('model', 100),
    timestamp: ts('timestamp').notNull().defaultNow(),
    metadata: txt('metadata'),
  },
  (t) => [index('session_messages_session').on(t.sessionId)],
);

export const dailyStats = pgTable(
  'daily_stats',
  {
    id: id(),
    date: day().notNull(),
    toolName: str('tool_name', 100).notNull(),
    hostName: str('host_name', 255).notNull().default('localhost'),
    senderName: str('sender_name', 255).notNull().default(''),
    totalTokens: counter('total_tokens'),
    totalInputTokens: counter('total_input_tokens'),
    totalOutputTokens: counter('total_output_tokens'),
    messageCount: counter('message_count'),
    projectId: int('project_id'),
    projectPath: str('project_path', 500),
  },
  (t) => [uniqueIndex('daily_stats_key').on(t.date, t.toolName, t.hostName, t.senderName)],
);

export const hourlyStats = pgTable(
  'hourly_stats',
  {
    id: id(),
    date: day().notNull(),
    hour: integer('hour').notNull(),
    toolName: str('tool_name', 100).notNull(),
    hostName: str('host_name', 255).notNull().default('localhost'),
    totalTokens: counter('total_tokens'),
    totalInputTokens: counter('total_input_tokens'),
    totalOutputTokens: counter('total_output_tokens'),
    messageCount: counter('message_count'),
  },
  (t) => [uniqueIndex('hourly_stats_key').on(t.date, t.hour, t.toolName, t.hostName)],
);

export const dailyUsage = pgTable(
  'daily_usage',
  {
    id: id(),
    tenantId: integer('tenant_id').notNull().default(1),
    date: day().notNull(),
    toolName: str('tool_name', 100).notNull(),
    hostName: str('host_name', 255).notNull().default('localhost'),
    tokensUsed: counter('tokens_used'),
    inputTokens: counter('input_tokens'),
    outputTokens: counter('output_tokens'),
    cacheTokens: counter('cache_tokens'),
    requestCount: counter('request_count'),
    modelsUsed: txt('models_used'),
    /** Of tokens_used, how many were estimated (a stream that ended without a usage report). */
    estimatedTokens: counter('estimated_tokens'),
  },
  (t) => [uniqueIndex('daily_usage_key').on(t.tenantId, t.date, t.toolName, t.hostName)],
);

export const usageSummary = pgTable(
  'usage_summary',
  {
    id: id(),
    toolName: str('tool_name', 100).notNull(),
    hostName: str('host_name', 255).notNull().default('localhost'),
    daysCount: integer('days_count').notNull().default(0),
    totalTokens: counter('total_tokens'),
    avgTokens: real('avg_tokens').notNull().default(0),
    totalRequests: counter('total_requests'),
    totalInputTokens: counter('total_input_tokens'),
    totalOutputTokens: counter('total_output_tokens'),
    firstDate: day('first_date'),
    lastDate: day('last_date'),
  },
  (t) => [uniqueIndex('usage_summary_key').on(t.toolName, t.hostName)],
);

/**
 * The last usage report uploaded through /api/upload/usage (or a batch's `usage` rows) for a tenant,
 * day, tool and host (added by 0012_usage_uploads). A report states the day's figures of usage that
 * has no messages; a newer report for the same key replaces it, and only the difference is added to
 * the statistics, so uploading the same report again changes nothing.
 */
export const usageUploads = pgTable(
  'usage_uploads',
  {
    id: id(),
    tenantId: integer('tenant_id')
      .notNull()
      .default(1)
      .references(() => tenants.id, { onDelete: 'cascade' }),
    date: day().notNull(),
    toolName: str('tool_name', 100).notNull(),
    hostName: str('host_name', 255).notNull().default('localhost'),
    tokensUsed: counter('tokens_used'),
    inputTokens: counter('input_tokens'),
    outputTokens: counter('output_tokens'),
    cacheTokens: counter('cache_tokens'),
    requestCount: counter('request_count'),
    modelsUsed: txt('models_used'),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('usage_uploads_key').on(t.tenantId, t.date, t.toolName, t.hostName)],
);

/** Per user and period (`daily` row keyed by YYYY-MM-DD, `monthly` row keyed by YYYY-MM-01). */
export const quotaUsage = pgTable(
  'quota_usage',
  {
    id: id(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    date: day().notNull(),
    period: str('period', 10).notNull().default('daily'),
    tokensUsed: counter('tokens_used'),
    requestsUsed: counter('requests_used'),
    tokensReserved: counter('tokens_reserved'),
    requestsReserved: counter('requests_reserved'),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('quota_usage_key').on(t.userId, t.date, t.period)],
);

export const quotaAlerts = pgTable(
  'quota_alerts',
  {
    id: id(),
    userId: int('user_id'),
    alertType: str('alert_type', 50),
    quotaType: str('quota_type', 50),
    threshold: real('threshold'),
    currentUsage: counter('current_usage'),
    quotaLimit: counter('quota_limit'),
    percentage: real('percentage'),
    acknowledged: bool('acknowledged', false),
    createdAt: createdAt(),
    // Added by 0013_usage_read_model: an alert is raised once per subject, quota, threshold and period.
    /** The tenant whose quota (tenant alerts) or whose user's quota (user alerts) was reached. */
    tenantId: int('tenant_id'),
    /** `daily` or `monthly`. */
    period: str('period', 10),
    /** The period's first day (YYYY-MM-DD, or YYYY-MM-01 for a month). */
    periodKey: day('period_key'),
    /** Unique: subject, quota type, threshold and period key; a second raise of the same is a no-op. */
    dedupeKey: str('dedupe_key', 200),
    acknowledgedBy: int('acknowledged_by'),
    acknowledgedAt: ts('acknowledged_at'),
  },
  (t) => [uniqueIndex('quota_alerts_once').on(t.dedupeKey), index('quota_alerts_tenant').on(t.tenantId)],
);

export const alerts = pgTable(
  'alerts',
  {
    id: id(),
    alertId: str('alert_id', 64).notNull().unique(),
    alertType: str('alert_type', 50),
    severity: str('severity', 20).notNull().default('info'),
    title: txt('title').notNull(),
    message: txt('message'),
    userId: int('user_id'),
    tenantId: int('tenant_id'),
    read: bool('read', false),
    createdAt: createdAt(),
  },
  (t) => [index('alerts_user').on(t.userId)],
);

/**
 * Who has read which alert (issue 28 item 5): read state is per user, so one administrator's "mark all
 * read" leaves another's tenant-wide alerts unread. A row means "read by this user"; `alerts.read`
 * stays for builds before revision 0041 and is no longer written.
 */
export const alertReads = pgTable(
  'alert_reads',
  {
    id: id(),
    alertId: integer('alert_id')
      .notNull()
      .references(() => alerts.id, { onDelete: 'cascade' }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    readAt: ts('read_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('alert_reads_alert_user').on(t.alertId, t.userId),
    index('alert_reads_user').on(t.userId),
  ],
);

export const notificationPreferences = pgTable('notification_preferences', {
  userId: integer('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  emailEnabled: bool('email_enabled', true),
  pushEnabled: bool('push_enabled', true),
  minSeverity: str('min_severity', 20).notNull().default('warning'),
  /** Robot webhook URL with any signing secret removed; the secret lives in webhook_secret_encrypted. */
  webhookUrl: txt('webhook_url'),
  webhookSecretEncrypted: txt('webhook_secret_encrypted'),
  updatedAt: updatedAt(),
});
