import { index, integer, pgTable } from 'drizzle-orm/pg-core';
import { createdAt, id, int, str, ts } from './columns.ts';

// Tables introduced by 0004_proxy_tokens.

/** Issuance record of every proxy token, keyed by its jti; the token itself is never stored. */
export const proxyTokens = pgTable(
  'proxy_tokens',
  {
    jti: str('jti', 64).primaryKey(),
    sessionId: str('session_id', 64).notNull(),
    userId: integer('user_id').notNull(),
    tenantId: int('tenant_id'),
    provider: str('provider', 20).notNull(),
    sessionType: str('session_type', 30).notNull().default('general'),
    issuedAt: createdAt(),
    expiresAt: ts('expires_at').notNull(),
    revokedAt: ts('revoked_at'),
    revokedReason: str('revoked_reason', 30),
  },
  (t) => [index('proxy_tokens_session').on(t.sessionId)],
);

/** Agent-reported usage, de-duplicated by the agent's report id. */
export const usageReports = pgTable(
  'usage_reports',
  {
    id: id(),
    reportId: str('report_id', 128).notNull().unique(),
    sessionId: str('session_id', 64),
    machineId: str('machine_id', 64),
    userId: int('user_id'),
    inputTokens: integer('input_tokens').notNull().default(0),
    outputTokens: integer('output_tokens').notNull().default(0),
    model: str('model', 100),
    receivedAt: createdAt(),
  },
  // Added by 0010_remote_machine_key: the per-session rate limit counts a session's recent reports.
  (t) => [index('usage_reports_session_received').on(t.sessionId, t.receivedAt)],
);
