import { index, integer, pgTable } from 'drizzle-orm/pg-core';
import { createdAt, id, int, str, ts } from './columns.ts';
import { users } from './identity.ts';

// Table introduced by 0035_upload_tokens: personal upload tokens (issue 25 item 5). A user creates one
// per collector; rows uploaded with it count for its owner whatever their sender fields say. Only the
// SHA-256 of the token is stored (the token is high-entropy random, so a plain hash is enough and a
// lookup by hash compares nothing in variable time); `prefix` is a short hint to tell tokens apart.
export const uploadTokens = pgTable(
  'upload_tokens',
  {
    id: id(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** The owner's tenant when the token was made: tenant admins list and revoke their tenant's tokens. */
    tenantId: int('tenant_id'),
    name: str('name', 100).notNull(),
    tokenHash: str('token_hash', 64).notNull().unique(),
    prefix: str('prefix', 16).notNull(),
    createdAt: createdAt(),
    expiresAt: ts('expires_at'),
    lastUsedAt: ts('last_used_at'),
    revokedAt: ts('revoked_at'),
    revokedBy: int('revoked_by'),
  },
  (t) => [index('upload_tokens_user').on(t.userId), index('upload_tokens_tenant').on(t.tenantId)],
);
