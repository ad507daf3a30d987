// The only SQL of gateway_keys and gateway_key_usage (personal gateway keys, domain/gateway-keys.ts).
// The proxy's lookup is by the key's hash, in one query with its owner's standing and the tenant's
// stored key for the key's provider; listings never select the hash.
import { and, desc, eq, isNull } from 'drizzle-orm';
import type { GatewayKeyLimits, GatewayKeyUse } from '../../domain/gateway-keys.ts';
import type { DatabaseHandle } from '../client.ts';
import {
  dateOf as date,
  STORED_KEY_COLUMNS,
  type StoredKeyRef,
  storedKeyJoin,
  storedKeyOf,
} from './stored-key-join.ts';

export type GatewayKeyRow = DatabaseHandle['t']['gatewayKeys']['$inferSelect'];
/** A key as listed: everything but its hash. */
export type GatewayKeyView = Omit<GatewayKeyRow, 'keyHash'> & { username: string };

/** A key with what a call needs: its owner's and tenant's standing and the stored provider key. */
export interface GatewayCallContext extends GatewayKeyLimits {
  id: number;
  userId: number;
  /** The owner's tenant now (its quota applies), else the key's. */
  tenantId: number | null;
  username: string;
  name: string;
  provider: string;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  userActive: boolean | null;
  userDeletedAt: Date | null;
  tenant: { name: string; status: string; deletedAt: Date | null } | null;
  /** The tenant's newest active stored key for the provider (ciphertext only). */
  storedKey: StoredKeyRef | null;
}

const CALL_CONTEXT = `
SELECT gk.id, gk.user_id, COALESCE(u.tenant_id, gk.tenant_id) AS tenant_id, gk.name, gk.provider,
       gk.expires_at, gk.revoked_at, gk.last_used_at,
       gk.daily_token_limit, gk.monthly_token_limit, gk.daily_request_limit,
       u.username, u.is_active AS user_active, u.deleted_at AS user_deleted_at,
       tn.name AS tenant_name, tn.status AS tenant_status, tn.deleted_at AS tenant_deleted_at,
       ${STORED_KEY_COLUMNS}
FROM gateway_keys gk
JOIN users u ON u.id = gk.user_id
LEFT JOIN tenants tn ON tn.id = COALESCE(u.tenant_id, gk.tenant_id)
${storedKeyJoin('COALESCE(u.tenant_id, gk.tenant_id)', 'gk.provider')}
WHERE gk.key_hash = ?`;

const num = (v: unknown): number | null => (v == null ? null : Number(v));

export function gatewayKeysRepository({ db, t, sql }: DatabaseHandle) {
  const keys = t.gatewayKeys;
  const listed = {
    id: keys.id,
    tenantId: keys.tenantId,
    userId: keys.userId,
    name: keys.name,
    provider: keys.provider,
    keyPrefix: keys.keyPrefix,
    expiresAt: keys.expiresAt,
    dailyTokenLimit: keys.dailyTokenLimit,
    monthlyTokenLimit: keys.monthlyTokenLimit,
    dailyRequestLimit: keys.dailyRequestLimit,
    createdAt: keys.createdAt,
    lastUsedAt: keys.lastUsedAt,
    revokedAt: keys.revokedAt,
    revokedBy: keys.revokedBy,
    username: t.users.username,
  };
  const select = () => db.select(listed).from(keys).innerJoin(t.users, eq(t.users.id, keys.userId));
  return {
    async create(values: Omit<GatewayKeyRow, 'id' | 'lastUsedAt' | 'revokedAt' | 'revokedBy'>) {
      const [row] = await db.insert(keys).values(values).returning({ id: keys.id });
      return (await this.find(row!.id))!;
    },
    async find(id: number): Promise<GatewayKeyView | undefined> {
      const [row] = await select().where(eq(keys.id, id));
      return row;
    },
    /** Newest first; no filter lists every tenant's (a system administrator). */
    async list(filter: { userId?: number; tenantId?: number }): Promise<GatewayKeyView[]> {
      const where = and(
        filter.userId !== undefined ? eq(keys.userId, filter.userId) : undefined,
        filter.tenantId !== undefined ? eq(keys.tenantId, filter.tenantId) : undefined,
      );
      return select().where(where).orderBy(desc(keys.id));
    },
    /** The proxy's one read for a key (see GatewayCallContext); undefined for an unknown hash. */
    async callContext(keyHash: string): Promise<GatewayCallContext | undefined> {
      const [r] = await sql.query<Record<string, unknown>>(CALL_CONTEXT, [true, keyHash], { prepared: true });
      if (!r) return undefined;
      return {
        id: Number(r.id),
        userId: Number(r.user_id),
        tenantId: num(r.tenant_id),
        username: String(r.username),
        name: String(r.name),
        provider: String(r.provider),
        expiresAt: date(r.expires_at),
        revokedAt: date(r.revoked_at),
        lastUsedAt: date(r.last_used_at),
        dailyTokenLimit: num(r.daily_token_limit),
        monthlyTokenLimit: num(r.monthly_token_limit),
        dailyRequestLimit: num(r.daily_request_limit),
        userActive: r.user_active == null ? null : Boolean(r.user_active),
        userDeletedAt: date(r.user_deleted_at),
        tenant:
          r.tenant_status == null
            ? null
            : {
                name: String(r.tenant_name),
                status: String(r.tenant_status),
                deletedAt: date(r.tenant_deleted_at),
              },
        storedKey: storedKeyOf(r),
      };
    },
    async touch(id: number, at: Date) {
      await db.update(keys).set({ lastUsedAt: at }).where(eq(keys.id, id));
    },
    /** Revokes a live key; false when it was already revoked. */
    async revoke(id: number, by: number, at: Date): Promise<boolean> {
      const rows = await db
        .update(keys)
        .set({ revokedAt: at, revokedBy: by })
        .where(and(eq(keys.id, id), isNull(keys.revokedAt)))
        .returning({ id: keys.id });
      return rows.length > 0;
    },

    /**
     * Takes one request of the day for a key with limits, only while every limit has room (one
     * conditional UPDATE: concurrent calls never pass the request limit). Returns null when taken,
     * else what was used (for the refusal's message).
     */
    async reserveRequest(
      keyId: number,
      p: { day: string; month: string },
      limits: GatewayKeyLimits,
    ): Promise<GatewayKeyUse | null> {
      for (const period of [p.day, p.month])
        await sql.query(
          'INSERT INTO gateway_key_usage (key_id, period, requests, tokens) VALUES (?, ?, 0, 0) ON CONFLICT (key_id, period) DO NOTHING',
          [keyId, period],
        );
      const conds: string[] = [];
      const args: unknown[] = [];
      if (limits.dailyRequestLimit !== null) {
        conds.push('requests < ?');
        args.push(limits.dailyRequestLimit);
      }
      if (limits.dailyTokenLimit !== null) {
        conds.push('tokens < ?');
        args.push(limits.dailyTokenLimit);
      }
      if (limits.monthlyTokenLimit !== null) {
        conds.push('(SELECT m.tokens FROM gateway_key_usage m WHERE m.key_id = ? AND m.period = ?) < ?');
        args.push(keyId, p.month, limits.monthlyTokenLimit);
      }
      const taken = await sql.query(
        `UPDATE gateway_key_usage SET requests = requests + 1 WHERE key_id = ? AND period = ?${conds.map((c) => ` AND ${c}`).join('')} RETURNING requests`,
        [keyId, p.day, ...args],
      );
      if (taken.length > 0) return null;
      const rows = await sql.query<{ period: string; requests: unknown; tokens: unknown }>(
        'SELECT period, requests, tokens FROM gateway_key_usage WHERE key_id = ? AND period IN (?, ?)',
        [keyId, p.day, p.month],
      );
      const of = (period: string) => rows.find((r) => r.period === period);
      return {
        dayRequests: Number(of(p.day)?.requests ?? 0),
        dayTokens: Number(of(p.day)?.tokens ?? 0),
        monthTokens: Number(of(p.month)?.tokens ?? 0),
      };
    },

    /** Ends a reserveRequest: adds the call's tokens, and gives the request back if it was not answered. */
    async settleRequest(keyId: number, p: { day: string; month: string }, tokens: number, counted: boolean) {
      await sql.query(
        'UPDATE gateway_key_usage SET tokens = tokens + ?, requests = requests - ? WHERE key_id = ? AND period = ?',
        [tokens, counted ? 0 : 1, keyId, p.day],
      );
      if (tokens > 0)
        await sql.query('UPDATE gateway_key_usage SET tokens = tokens + ? WHERE key_id = ? AND period = ?', [
          tokens,
          keyId,
          p.month,
        ]);
    },
  };
}
