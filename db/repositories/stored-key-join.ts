// The part of the model proxy's one-query call context that names the stored provider key: the
// tenant's newest active key for the provider (ciphertext only), joined as `k`, and its mapping. Shared
// by the session tokens' context (proxy-tokens.ts) and the gateway keys' (gateway-keys.ts), so both
// pick the same key by the same rule. Its one parameter is `true` (is_active), first in the query.
export interface StoredKeyRef {
  id: number;
  encryptedKey: string;
  baseUrl: string | null;
  /** false means the proxy connects through the egress guard. */
  createdBySystemAdmin: boolean;
}

/** The SELECT columns of the stored key. */
export const STORED_KEY_COLUMNS = 'k.id AS key_id, k.encrypted_key, k.base_url, k.created_by_system_admin';

/** LEFT JOIN of the stored key for a tenant and provider given as SQL expressions. */
export const storedKeyJoin = (tenant: string, provider: string): string => `
LEFT JOIN api_key_store k ON k.id = (
  SELECT MAX(k2.id) FROM api_key_store k2
  WHERE k2.tenant_id = ${tenant} AND k2.provider = ${provider} AND k2.is_active = ?)`;

export const storedKeyOf = (r: Record<string, unknown>): StoredKeyRef | null =>
  r.key_id == null
    ? null
    : {
        id: Number(r.key_id),
        encryptedKey: String(r.encrypted_key),
        baseUrl: r.base_url == null ? null : String(r.base_url),
        createdBySystemAdmin: Boolean(r.created_by_system_admin),
      };

/** A timestamp as either driver returns it (Date on PostgreSQL, epoch milliseconds on SQLite). */
export const dateOf = (v: unknown): Date | null =>
  v == null ? null : v instanceof Date ? v : new Date(Number(v));
