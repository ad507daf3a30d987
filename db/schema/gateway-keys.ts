import { index, integer, pgTable, uniqueIndex } from 'drizzle-orm/pg-core';
import { counter, createdAt, id, int, str, ts } from './columns.ts';
import { users } from './identity.ts';

// Tables introduced by 0042_gateway_keys: personal gateway keys (issue 29 item 1). A user's own
// credential for the CLIs on their laptop, used with the model proxy in place of a provider key. Only
// the SHA-256 of the key is stored (256 random bits: a plain hash is enough, and the lookup by hash
// compares nothing in variable time); `key_prefix` (its first 12 characters) tells keys apart.
export const gatewayKeys = pgTable(
  'gateway_keys',
  {
    id: id(),
    /** The owner's tenant when the key was made: tenant admins list and revoke their tenant's keys. */
    tenantId: int('tenant_id'),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: str('name', 100).notNull(),
    /** The one provider (domain/key-providers.ts) the key reaches, like a session's proxy token. */
    provider: str('provider', 20).notNull(),
    keyHash: str('key_hash', 64).notNull().unique(),
    keyPrefix: str('key_prefix', 16).notNull(),
    expiresAt: ts('expires_at'),
    /** The key's own limits, lower limits inside its owner's quota (null: none). */
    dailyTokenLimit: int('daily_token_limit'),
    monthlyTokenLimit: int('monthly_token_limit'),
    dailyRequestLimit: int('daily_request_limit'),
    createdAt: createdAt(),
    lastUsedAt: ts('last_used_at'),
    revokedAt: ts('revoked_at'),
    revokedBy: int('revoked_by'),
  },
  (t) => [index('gateway_keys_user').on(t.userId), index('gateway_keys_tenant').on(t.tenantId)],
);

/**
 * What a key with limits used per period: `period` is a day (`2026-11-28`) or a month (`2026-11`) of
 * its owner's quota periods. Only keys with a limit get rows (services/gateway-keys.ts).
 */
export const gatewayKeyUsage = pgTable(
  'gateway_key_usage',
  {
    keyId: integer('key_id')
      .notNull()
      .references(() => gatewayKeys.id, { onDelete: 'cascade' }),
    period: str('period', 10).notNull(),
    requests: counter('requests'),
    tokens: counter('tokens'),
  },
  (t) => [uniqueIndex('gateway_key_usage_key').on(t.keyId, t.period)],
);
