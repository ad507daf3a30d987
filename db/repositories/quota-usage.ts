// The only SQL of the shared usage accounting: quota_usage (per user, daily and monthly rows),
// tenant_usage (per tenant and day), daily_usage (per tenant, day, tool and host) and the session totals
// in agent_sessions. Raw SQL with `?` placeholders, the same text on SQLite and PostgreSQL.
//
// Reservations are single conditional UPDATEs: the row is changed only if the limit still has room,
// evaluated against the row's current values under the row lock (PostgreSQL re-checks the condition
// on the newest row version after waiting for a concurrent writer; SQLite has one writer), so two
// concurrent requests can never both take the last unit of a quota.

import type { PeriodUsage, QuotaLimits } from '../../domain/quota.ts';
import { TOKENS_PER_USER_QUOTA_UNIT } from '../../domain/quota.ts';
import { DEFAULT_TENANT_QUOTAS } from '../../domain/tenants.ts';
import type { DatabaseHandle, RawSql } from '../client.ts';

export interface UserPeriods {
  day: string;
  month: string;
}

export interface TenantPeriods {
  day: string;
  /** First day of the month and first day of the next month (the month's day range). */
  monthStart: string;
  nextMonthStart: string;
}

/** What a settle adds to the used counters and takes off the reserved ones. */
export interface SettleDelta {
  tokens: number;
  requests: number;
  releaseTokens: number;
  releaseRequests: number;
}

export interface DailyUsageDelta {
  tenantId: number;
  date: string;
  toolName: string;
  hostName: string;
  tokens: number;
  inputTokens: number;
  outputTokens: number;
  cacheTokens: number;
  /** Tokens (of `tokens`) that were estimated rather than reported by the provider. */
  estimatedTokens: number;
  requests: number;
  models: string[];
}

export interface SessionTotalsDelta {
  sessionId: string;
  tokens: number;
  inputTokens: number;
  outputTokens: number;
  requests: number;
}

/** A user's limits (actual tokens) and counters of one day and month (readAllUsers). */
export interface AllUsersRow {
  userId: number;
  username: string;
  tenantId: number | null;
  limits: QuotaLimits;
  daily: PeriodUsage;
  monthly: PeriodUsage;
}

/** The limits of a tenant_quotas row (actual tokens and requests). */
export interface TenantQuotaRow {
  dailyTokenLimit: number;
  monthlyTokenLimit: number;
  dailyRequestLimit: number;
  monthlyRequestLimit: number;
}

/** A tenant's quota row (undefined: spec defaults) and the sums of its day and month (readAllTenants). */
export interface AllTenantsRow {
  tenantId: number;
  name: string;
  quota: TenantQuotaRow | undefined;
  daily: PeriodUsage;
  monthly: PeriodUsage;
}

type Amount = { tokens: number; requests: number };
type Statement = [text: string, params: unknown[]];

/** Hot statements: prepared once per PostgreSQL connection (see QueryOptions). */
const PREPARED = { prepared: true } as const;

const num = (v: unknown): number => (v == null ? 0 : Number(v));
const numOrNull = (v: unknown): number | null => (v == null ? null : Number(v));

/**
 * PostgreSQL: an UPDATE locks the rows it changes in the order its plan visits them, and two plans
 * over a user's daily and monthly rows need not agree (a deadlock under load, seen in bench/proxy).
 * So statements touching both rows first lock them in one fixed order (daily before monthly).
 * SQLite has a single writer and needs nothing.
 */
const LOCK_USER_ROWS_IN_ORDER = `
  AND quota_usage.id IN (SELECT o.id FROM quota_usage o
    WHERE o.user_id = ? AND ((o.period = 'daily' AND o.date = ?) OR (o.period = 'monthly' AND o.date = ?))
    ORDER BY o.period FOR UPDATE)`;

/**
 * PostgreSQL: quota counters are written with an asynchronous commit (`SET LOCAL synchronous_commit
 * = off`, spelled as a one-row join so it costs no extra round trip). Every call takes a row lock on
 * its user's and tenant's counter rows; with a synchronous commit that lock is held across a WAL
 * flush, so one busy tenant is capped at a few hundred calls per second (measured in bench/proxy).
 * The price: if the PostgreSQL server itself crashes, the counter updates of its last moments (well
 * under a second) are lost: a few calls go uncounted and a reservation taken in that window vanishes
 * (the settle then stops at zero). The service's own crash loses nothing it had committed.
 */
const ASYNC_COMMIT = `(SELECT set_config('synchronous_commit', 'off', true)) AS async_commit`;

const RESERVE_USER = (pg: boolean) => `
UPDATE quota_usage
SET requests_reserved = quota_usage.requests_reserved + ?,
    tokens_reserved = quota_usage.tokens_reserved + ?,
    updated_at = ?
FROM users u${pg ? `, ${ASYNC_COMMIT}` : ''}
WHERE u.id = quota_usage.user_id AND quota_usage.user_id = ?${pg ? LOCK_USER_ROWS_IN_ORDER : ''}
  AND ((quota_usage.period = 'daily' AND quota_usage.date = ?
        AND (u.daily_request_quota IS NULL
             OR quota_usage.requests_used + quota_usage.requests_reserved + ? <= u.daily_request_quota)
        AND (u.daily_token_quota IS NULL
             OR quota_usage.tokens_used + quota_usage.tokens_reserved + ? <= u.daily_token_quota * ${TOKENS_PER_USER_QUOTA_UNIT}))
    OR (quota_usage.period = 'monthly' AND quota_usage.date = ?
        AND (u.monthly_request_quota IS NULL
             OR quota_usage.requests_used + quota_usage.requests_reserved + ? <= u.monthly_request_quota)
        AND (u.monthly_token_quota IS NULL
             OR quota_usage.tokens_used + quota_usage.tokens_reserved + ? <= u.monthly_token_quota * ${TOKENS_PER_USER_QUOTA_UNIT})))
RETURNING period`;

// The monthly tenant figure is today's row (read fresh under its lock) plus the month's other days
// (which only change by settling, never by new reservations).
const RESERVE_TENANT = (pg: boolean) => `
UPDATE tenant_usage
SET requests_reserved = tenant_usage.requests_reserved + ?,
    tokens_reserved = tenant_usage.tokens_reserved + ?
FROM (
  SELECT COALESCE(q.daily_request_limit, ${DEFAULT_TENANT_QUOTAS.daily_request_limit}) AS dr,
         COALESCE(q.daily_token_limit, ${DEFAULT_TENANT_QUOTAS.daily_token_limit}) AS dt,
         COALESCE(q.monthly_request_limit, ${DEFAULT_TENANT_QUOTAS.monthly_request_limit}) AS mr,
         COALESCE(q.monthly_token_limit, ${DEFAULT_TENANT_QUOTAS.monthly_token_limit}) AS mt,
         COALESCE(m.requests, 0) AS other_requests,
         COALESCE(m.tokens, 0) AS other_tokens
  FROM (SELECT 1 AS one) base
  LEFT JOIN tenant_quotas q ON q.tenant_id = ?
  LEFT JOIN (SELECT SUM(o.requests_made + o.requests_reserved) AS requests,
                    SUM(o.tokens_used + o.tokens_reserved) AS tokens
             FROM tenant_usage o
             WHERE o.tenant_id = ? AND o.date >= ? AND o.date < ? AND o.date <> ?) m ON 1 = 1
) lim${pg ? `, ${ASYNC_COMMIT}` : ''}
WHERE tenant_usage.tenant_id = ? AND tenant_usage.date = ?
  AND tenant_usage.requests_made + tenant_usage.requests_reserved + ? <= lim.dr
  AND tenant_usage.tokens_used + tenant_usage.tokens_reserved + ? <= lim.dt
  AND tenant_usage.requests_made + tenant_usage.requests_reserved + lim.other_requests + ? <= lim.mr
  AND tenant_usage.tokens_used + tenant_usage.tokens_reserved + lim.other_tokens + ? <= lim.mt
RETURNING tenant_usage.id`;

/** `col - n`, never below zero (a duplicate release must not drive a counter negative). */
const minus = (col: string) => `CASE WHEN ${col} > ? THEN ${col} - ? ELSE 0 END`;

const SETTLE_TENANT = (pg: boolean) => `
UPDATE tenant_usage
SET tokens_used = tokens_used + ?, requests_made = requests_made + ?,
    tokens_reserved = ${minus('tokens_reserved')}, requests_reserved = ${minus('requests_reserved')}
${pg ? `FROM ${ASYNC_COMMIT}` : ''}
WHERE tenant_id = ? AND date = ?`;

export function quotaUsageRepository({ sql, dialect }: DatabaseHandle) {
  const q = sql;
  const pg = dialect === 'postgres';
  const lockInOrder = pg;
  const reserveUserSql = RESERVE_USER(pg);
  const reserveTenantSql = RESERVE_TENANT(pg);
  const settleTenantSql = SETTLE_TENANT(pg);
  const position = dialect === 'postgres' ? 'strpos' : 'instr';

  const reserveUserStatement = (
    userId: number,
    p: UserPeriods,
    reserve: Amount,
    need: Amount,
    at: Date,
  ): Statement => [
    reserveUserSql,
    [
      reserve.requests,
      reserve.tokens,
      at,
      userId,
      ...(lockInOrder ? [userId, p.day, p.month] : []),
      p.day,
      need.requests,
      need.tokens,
      p.month,
      need.requests,
      need.tokens,
    ],
  ];

  const reserveTenantStatement = (
    tenantId: number,
    p: TenantPeriods,
    reserve: Amount,
    need: Amount,
  ): Statement => [
    reserveTenantSql,
    [
      reserve.requests,
      reserve.tokens,
      tenantId,
      tenantId,
      p.monthStart,
      p.nextMonthStart,
      p.day,
      tenantId,
      p.day,
      need.requests,
      need.tokens,
      need.requests,
      need.tokens,
    ],
  ];

  const settleUserStatement = (
    userId: number,
    periods: { day?: string; month?: string },
    d: SettleDelta,
    at: Date,
  ): Statement | undefined => {
    const where: string[] = [];
    const params: unknown[] = [];
    if (periods.day !== undefined) {
      where.push(`(period = 'daily' AND date = ?)`);
      params.push(periods.day);
    }
    if (periods.month !== undefined) {
      where.push(`(period = 'monthly' AND date = ?)`);
      params.push(periods.month);
    }
    if (where.length === 0) return undefined;
    const both = lockInOrder && where.length === 2;
    return [
      `UPDATE quota_usage
       SET tokens_used = tokens_used + ?, requests_used = requests_used + ?,
           tokens_reserved = ${minus('tokens_reserved')}, requests_reserved = ${minus('requests_reserved')},
           updated_at = ?
       ${pg ? `FROM ${ASYNC_COMMIT}` : ''}
       WHERE user_id = ?${both ? LOCK_USER_ROWS_IN_ORDER : ''} AND (${where.join(' OR ')})`,
      [
        d.tokens,
        d.requests,
        d.releaseTokens,
        d.releaseTokens,
        d.releaseRequests,
        d.releaseRequests,
        at,
        userId,
        ...(both ? [userId, periods.day, periods.month] : []),
        ...params,
      ],
    ];
  };

  const settleTenantStatement = (tenantId: number, day: string, d: SettleDelta): Statement => [
    settleTenantSql,
    [
      d.tokens,
      d.requests,
      d.releaseTokens,
      d.releaseTokens,
      d.releaseRequests,
      d.releaseRequests,
      tenantId,
      day,
    ],
  ];
  /** models_used as a comma list: appends the model unless already listed. */
  const mergeModel = (col: string) =>
    `CASE WHEN ${col} IS NULL OR ${col} = '' THEN CAST(? AS TEXT)
          WHEN ${position}(',' || ${col} || ',', ',' || CAST(? AS TEXT) || ',') > 0 THEN ${col}
          ELSE ${col} || ',' || CAST(? AS TEXT) END`;

  return {
    /**
     * Creates the user's daily and monthly rows when missing. Returns true when the daily row was
     * created now (the user's first use of the day: the tenant's active_users goes up by one).
     */
    async ensureUserRows(userId: number, p: UserPeriods, at: Date, db: RawSql = q): Promise<boolean> {
      const rows = await db.query<{ period: string }>(
        `INSERT INTO quota_usage (user_id, date, period, updated_at) VALUES (?, ?, 'daily', ?), (?, ?, 'monthly', ?)
         ON CONFLICT (user_id, date, period) DO NOTHING RETURNING period`,
        [userId, p.day, at, userId, p.month, at],
      );
      return rows.some((r) => r.period === 'daily');
    },

    async ensureTenantRow(
      tenantId: number,
      day: string,
      newActiveUser: boolean,
      db: RawSql = q,
    ): Promise<void> {
      await db.query(
        `INSERT INTO tenant_usage (tenant_id, date, active_users) VALUES (?, ?, ?)
         ON CONFLICT (tenant_id, date) DO ${newActiveUser ? 'UPDATE SET active_users = tenant_usage.active_users + 1' : 'NOTHING'}`,
        [tenantId, day, newActiveUser ? 1 : 0],
      );
    },

    /** Reserves on the user's daily and monthly rows where they have room; returns the periods reserved. */
    async reserveUser(
      userId: number,
      p: UserPeriods,
      reserve: Amount,
      need: Amount,
      at: Date,
      db: RawSql = q,
    ): Promise<Array<'daily' | 'monthly'>> {
      const [text, params] = reserveUserStatement(userId, p, reserve, need, at);
      const rows = await db.query<{ period: 'daily' | 'monthly' }>(text, params, PREPARED);
      return rows.map((r) => r.period);
    },

    /** Reserves on the tenant's row of the day when the daily and monthly limits have room. */
    async reserveTenant(
      tenantId: number,
      p: TenantPeriods,
      reserve: Amount,
      need: Amount,
      db: RawSql = q,
    ): Promise<boolean> {
      const [text, params] = reserveTenantStatement(tenantId, p, reserve, need);
      return (await db.query(text, params, PREPARED)).length > 0;
    },

    /**
     * PostgreSQL: both halves of a reservation in one statement (one round trip, one commit). Lock
     * order matters here (two statements locking the same rows in opposite orders deadlock): the
     * result columns read `u` before `t`, which makes PostgreSQL run the user half first; an
     * unreferenced data-modifying CTE would run in no promised order. settleBoth is written the same
     * way, and the service retries a statement PostgreSQL picks as a deadlock victim anyway.
     */
    async reserveBoth(
      userId: number,
      tenantId: number,
      p: UserPeriods & TenantPeriods,
      reserve: Amount,
      need: Amount,
      at: Date,
    ): Promise<{ user: Array<'daily' | 'monthly'>; tenant: boolean }> {
      const [userText, userParams] = reserveUserStatement(userId, p, reserve, need, at);
      const [tenantText, tenantParams] = reserveTenantStatement(tenantId, p, reserve, need);
      const [row] = await q.query<{ user_periods: string | null; tenant_rows: unknown }>(
        `WITH u AS (${userText}), t AS (${tenantText})
         SELECT (SELECT string_agg(period, ',') FROM u) AS user_periods, (SELECT count(*) FROM t) AS tenant_rows`,
        [...userParams, ...tenantParams],
        PREPARED,
      );
      return {
        user: (row?.user_periods ? row.user_periods.split(',') : []) as Array<'daily' | 'monthly'>,
        tenant: Number(row?.tenant_rows ?? 0) > 0,
      };
    },

    /** Adds used counts and takes back reservations on the user's rows of the given periods. */
    async settleUser(
      userId: number,
      periods: { day?: string; month?: string },
      d: SettleDelta,
      at: Date,
      db: RawSql = q,
    ): Promise<void> {
      const statement = settleUserStatement(userId, periods, d, at);
      if (statement) await db.query(statement[0], statement[1], PREPARED);
    },

    async settleTenant(tenantId: number, day: string, d: SettleDelta, db: RawSql = q): Promise<void> {
      const [text, params] = settleTenantStatement(tenantId, day, d);
      await db.query(text, params, PREPARED);
    },

    /** PostgreSQL: a settle of the user's two rows and the tenant's row in one statement. */
    async settleBoth(
      userId: number,
      tenantId: number,
      p: UserPeriods,
      d: SettleDelta,
      at: Date,
    ): Promise<void> {
      const [userText, userParams] = settleUserStatement(userId, { day: p.day, month: p.month }, d, at)!;
      const [tenantText, tenantParams] = settleTenantStatement(tenantId, p.day, d);
      await q.query(
        `WITH u AS (${userText} RETURNING 1), t AS (${tenantText} RETURNING 1)
         SELECT (SELECT count(*) FROM u) AS user_rows, (SELECT count(*) FROM t) AS tenant_rows`,
        [...userParams, ...tenantParams],
        PREPARED,
      );
    },

    /** The user's limits and the counters of the day and month (zeros for missing rows). */
    async readUser(
      userId: number,
      p: UserPeriods,
      db: RawSql = q,
    ): Promise<{ exists: boolean; limits: QuotaLimits; daily: PeriodUsage; monthly: PeriodUsage }> {
      const [users, rows] = await Promise.all([
        db.query<Record<string, unknown>>(
          `SELECT daily_token_quota, monthly_token_quota, daily_request_quota, monthly_request_quota
           FROM users WHERE id = ?`,
          [userId],
        ),
        db.query<Record<string, unknown>>(
          `SELECT period, tokens_used, requests_used, tokens_reserved, requests_reserved FROM quota_usage
           WHERE user_id = ? AND ((period = 'daily' AND date = ?) OR (period = 'monthly' AND date = ?))`,
          [userId, p.day, p.month],
        ),
      ]);
      const u = users[0];
      const tokens = (v: unknown) => (v == null ? null : Number(v) * TOKENS_PER_USER_QUOTA_UNIT);
      const usage = (period: string): PeriodUsage => {
        const r = rows.find((x) => x.period === period);
        return {
          tokensUsed: num(r?.tokens_used),
          requestsUsed: num(r?.requests_used),
          tokensReserved: num(r?.tokens_reserved),
          requestsReserved: num(r?.requests_reserved),
        };
      };
      return {
        exists: u !== undefined,
        limits: {
          dailyTokens: tokens(u?.daily_token_quota),
          monthlyTokens: tokens(u?.monthly_token_quota),
          dailyRequests: numOrNull(u?.daily_request_quota),
          monthlyRequests: numOrNull(u?.monthly_request_quota),
        },
        daily: usage('daily'),
        monthly: usage('monthly'),
      };
    },

    /** The tenant_quotas row (undefined when the tenant has none) and the day's and month's sums. */
    async readTenant(
      tenantId: number,
      p: TenantPeriods,
      db: RawSql = q,
    ): Promise<{ quota: TenantQuotaRow | undefined; daily: PeriodUsage; monthly: PeriodUsage }> {
      const [quotas, rows] = await Promise.all([
        db.query<Record<string, unknown>>(
          `SELECT daily_token_limit, monthly_token_limit, daily_request_limit, monthly_request_limit
           FROM tenant_quotas WHERE tenant_id = ?`,
          [tenantId],
        ),
        db.query<Record<string, unknown>>(
          `SELECT date, tokens_used, requests_made, tokens_reserved, requests_reserved FROM tenant_usage
           WHERE tenant_id = ? AND date >= ? AND date < ?`,
          [tenantId, p.monthStart, p.nextMonthStart],
        ),
      ]);
      const sum = (list: Record<string, unknown>[]): PeriodUsage => ({
        tokensUsed: list.reduce((a, r) => a + num(r.tokens_used), 0),
        requestsUsed: list.reduce((a, r) => a + num(r.requests_made), 0),
        tokensReserved: list.reduce((a, r) => a + num(r.tokens_reserved), 0),
        requestsReserved: list.reduce((a, r) => a + num(r.requests_reserved), 0),
      });
      const qr = quotas[0];
      return {
        quota: qr && {
          dailyTokenLimit: num(qr.daily_token_limit),
          monthlyTokenLimit: num(qr.monthly_token_limit),
          dailyRequestLimit: num(qr.daily_request_limit),
          monthlyRequestLimit: num(qr.monthly_request_limit),
        },
        daily: sum(rows.filter((r) => r.date === p.day)),
        monthly: sum(rows),
      };
    },

    async addDailyUsage(d: DailyUsageDelta, db: RawSql = q): Promise<void> {
      const [first, ...others] = d.models;
      const model = first ?? null;
      await db.query(
        `INSERT INTO daily_usage (tenant_id, date, tool_name, host_name, tokens_used, input_tokens, output_tokens,
                                  cache_tokens, estimated_tokens, request_count, models_used)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (tenant_id, date, tool_name, host_name) DO UPDATE SET
           tokens_used = daily_usage.tokens_used + excluded.tokens_used,
           input_tokens = daily_usage.input_tokens + excluded.input_tokens,
           output_tokens = daily_usage.output_tokens + excluded.output_tokens,
           cache_tokens = daily_usage.cache_tokens + excluded.cache_tokens,
           estimated_tokens = daily_usage.estimated_tokens + excluded.estimated_tokens,
           request_count = daily_usage.request_count + excluded.request_count
           ${model === null ? '' : `, models_used = ${mergeModel('daily_usage.models_used')}`}`,
        [
          d.tenantId,
          d.date,
          d.toolName,
          d.hostName,
          d.tokens,
          d.inputTokens,
          d.outputTokens,
          d.cacheTokens,
          d.estimatedTokens,
          d.requests,
          model,
          ...(model === null ? [] : [model, model, model]),
        ],
      );
      for (const m of others) {
        await db.query(
          `UPDATE daily_usage SET models_used = ${mergeModel('models_used')}
           WHERE tenant_id = ? AND date = ? AND tool_name = ? AND host_name = ?`,
          [m, m, m, d.tenantId, d.date, d.toolName, d.hostName],
        );
      }
    },

    /**
     * Every live user inside the tenant condition (`tenantCondition` over `u.tenant_id`, from
     * db/tenant-scope-sql.ts; undefined = all) with their limits and the counters of the day and month.
     * One statement: the two quota_usage rows are joined, not read per user.
     */
    async readAllUsers(
      p: UserPeriods,
      tenantCondition?: { sql: string; params: unknown[] },
      db: RawSql = q,
    ): Promise<Array<AllUsersRow>> {
      const rows = await db.query<Record<string, unknown>>(
        `SELECT u.id, u.username, u.tenant_id, u.daily_token_quota, u.monthly_token_quota,
                u.daily_request_quota, u.monthly_request_quota,
                d.tokens_used AS d_tokens, d.requests_used AS d_requests,
                d.tokens_reserved AS d_tokens_reserved, d.requests_reserved AS d_requests_reserved,
                m.tokens_used AS m_tokens, m.requests_used AS m_requests,
                m.tokens_reserved AS m_tokens_reserved, m.requests_reserved AS m_requests_reserved
         FROM users u
         LEFT JOIN quota_usage d ON d.user_id = u.id AND d.period = 'daily' AND d.date = ?
         LEFT JOIN quota_usage m ON m.user_id = u.id AND m.period = 'monthly' AND m.date = ?
         WHERE u.deleted_at IS NULL${tenantCondition ? ` AND ${tenantCondition.sql}` : ''}
         ORDER BY u.id`,
        [p.day, p.month, ...(tenantCondition?.params ?? [])],
      );
      const tokens = (v: unknown) => (v == null ? null : Number(v) * TOKENS_PER_USER_QUOTA_UNIT);
      const usage = (r: Record<string, unknown>, x: 'd' | 'm'): PeriodUsage => ({
        tokensUsed: num(r[`${x}_tokens`]),
        requestsUsed: num(r[`${x}_requests`]),
        tokensReserved: num(r[`${x}_tokens_reserved`]),
        requestsReserved: num(r[`${x}_requests_reserved`]),
      });
      return rows.map((r) => ({
        userId: Number(r.id),
        username: String(r.username),
        tenantId: numOrNull(r.tenant_id),
        limits: {
          dailyTokens: tokens(r.daily_token_quota),
          monthlyTokens: tokens(r.monthly_token_quota),
          dailyRequests: numOrNull(r.daily_request_quota),
          monthlyRequests: numOrNull(r.monthly_request_quota),
        },
        daily: usage(r, 'd'),
        monthly: usage(r, 'm'),
      }));
    },

    /**
     * Every live tenant inside the tenant condition (over `t.id`), its tenant_quotas row (undefined when
     * it has none: the spec defaults apply) and the sums of its tenant_usage rows of the day and month.
     */
    async readAllTenants(
      p: TenantPeriods,
      tenantCondition?: { sql: string; params: unknown[] },
      db: RawSql = q,
    ): Promise<Array<AllTenantsRow>> {
      const rows = await db.query<Record<string, unknown>>(
        `SELECT t.id, t.name, tq.daily_token_limit, tq.monthly_token_limit, tq.daily_request_limit,
                tq.monthly_request_limit, tq.tenant_id AS has_quota,
                SUM(CASE WHEN tu.date = ? THEN tu.tokens_used ELSE 0 END) AS d_tokens,
                SUM(CASE WHEN tu.date = ? THEN tu.requests_made ELSE 0 END) AS d_requests,
                SUM(CASE WHEN tu.date = ? THEN tu.tokens_reserved ELSE 0 END) AS d_tokens_reserved,
                SUM(CASE WHEN tu.date = ? THEN tu.requests_reserved ELSE 0 END) AS d_requests_reserved,
                SUM(COALESCE(tu.tokens_used, 0)) AS m_tokens, SUM(COALESCE(tu.requests_made, 0)) AS m_requests,
                SUM(COALESCE(tu.tokens_reserved, 0)) AS m_tokens_reserved,
                SUM(COALESCE(tu.requests_reserved, 0)) AS m_requests_reserved
         FROM tenants t
         LEFT JOIN tenant_quotas tq ON tq.tenant_id = t.id
         LEFT JOIN tenant_usage tu ON tu.tenant_id = t.id AND tu.date >= ? AND tu.date < ?
         WHERE t.deleted_at IS NULL${tenantCondition ? ` AND ${tenantCondition.sql}` : ''}
         GROUP BY t.id, t.name, tq.tenant_id, tq.daily_token_limit, tq.monthly_token_limit,
                  tq.daily_request_limit, tq.monthly_request_limit
         ORDER BY t.id`,
        [p.day, p.day, p.day, p.day, p.monthStart, p.nextMonthStart, ...(tenantCondition?.params ?? [])],
      );
      const usage = (r: Record<string, unknown>, x: 'd' | 'm'): PeriodUsage => ({
        tokensUsed: num(r[`${x}_tokens`]),
        requestsUsed: num(r[`${x}_requests`]),
        tokensReserved: num(r[`${x}_tokens_reserved`]),
        requestsReserved: num(r[`${x}_requests_reserved`]),
      });
      return rows.map((r) => ({
        tenantId: Number(r.id),
        name: String(r.name),
        quota:
          r.has_quota == null
            ? undefined
            : {
                dailyTokenLimit: num(r.daily_token_limit),
                monthlyTokenLimit: num(r.monthly_token_limit),
                dailyRequestLimit: num(r.daily_request_limit),
                monthlyRequestLimit: num(r.monthly_request_limit),
              },
        daily: usage(r, 'd'),
        monthly: usage(r, 'm'),
      }));
    },

    async addSessionTotals(d: SessionTotalsDelta, at: Date, db: RawSql = q): Promise<void> {
      await db.query(
        `UPDATE agent_sessions
         SET total_tokens = total_tokens + ?, total_input_tokens = total_input_tokens + ?,
             total_output_tokens = total_output_tokens + ?, request_count = request_count + ?, updated_at = ?
         WHERE session_id = ?`,
        [d.tokens, d.inputTokens, d.outputTokens, d.requests, at, d.sessionId],
      );
    },
  };
}

export type QuotaUsageRepository = ReturnType<typeof quotaUsageRepository>;
