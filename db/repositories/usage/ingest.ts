// The SQL of message ingestion (spec document 2, "Messages and agent sessions", "Statistics"): the
// insert into daily_messages that reports which rows were new, the sender lookup, multi-row UPSERTs
// of daily_stats and hourly_stats (the two with about one key per few messages), and one UPSERT per
// aggregate key of usage_summary, user_daily_stats, the agent_sessions totals and
// tenants.total_tokens_used. daily_usage, tenant_usage and quota_usage are written by the
// shared accounting's repository (db/repositories/quota-usage.ts), called by the service on the same
// transaction. Raw SQL with `?` placeholders, the same text on SQLite and PostgreSQL.

import { type UsageDay, usageDayKey } from '../../../domain/usage/counting.ts';
import type {
  DailyStatsDelta,
  HourlyStatsDelta,
  SessionDelta,
  TenantTotalDelta,
  UsageSummaryDelta,
  UserDayDelta,
} from '../../../domain/usage/ingest-aggregate.ts';
import type { MessageRow } from '../../../domain/usage/ingest-rows.ts';
import type { RawSql } from '../../client.ts';
import { daysCondition } from './usage-uploads.ts';

/** Rows per INSERT statement: 21 parameters each stays far below SQLite's 32766-variable limit. */
const INSERT_ROWS_PER_STATEMENT = 500;
/** Values per IN list. */
const IN_LIST = 500;

export interface SenderOwner {
  userId: number;
  tenantId: number | null;
}

const MESSAGE_COLUMNS = [
  'date',
  'tool_name',
  'host_name',
  'message_id',
  'parent_id',
  'role',
  'content',
  'full_entry',
  'tokens_used',
  'input_tokens',
  'output_tokens',
  'model',
  '"timestamp"',
  'sender_id',
  'sender_name',
  'message_source',
  'conversation_id',
  'agent_session_id',
  'user_id',
  'project_path',
  'tenant_id',
];
const MESSAGE_PLACEHOLDERS = `(${MESSAGE_COLUMNS.map(() => '?').join(', ')})`;

function slices<T>(list: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

/**
 * Slices for multi-row UPSERTs: UPSERT_ROWS rows each, then the rest in powers of two, so a statement
 * has one of a few row counts and stays prepared (the clients cache statements by their text).
 */
const UPSERT_ROWS = 256;
function upsertSlices<T>(list: readonly T[]): T[][] {
  const out: T[][] = [];
  let i = 0;
  for (; i + UPSERT_ROWS <= list.length; i += UPSERT_ROWS) out.push(list.slice(i, i + UPSERT_ROWS));
  for (let size = UPSERT_ROWS / 2; size >= 1; size /= 2)
    if (i + size <= list.length) {
      out.push(list.slice(i, i + size));
      i += size;
    }
  return out;
}

const placeholders = (n: number) => Array.from({ length: n }, () => '?').join(', ');

/**
 * The UPSERT shared by daily_stats and hourly_stats: the same four counters added under a table's
 * unique key, one multi-row statement per slice (fixed slice sizes, so the statements stay prepared).
 */
async function addStatsCounters<
  T extends { tokens: number; inputTokens: number; outputTokens: number; messages: number },
>(
  db: RawSql,
  table: 'daily_stats' | 'hourly_stats',
  keyColumns: readonly string[],
  rows: readonly T[],
  keyOf: (row: T) => unknown[],
): Promise<void> {
  const columns = [
    ...keyColumns,
    'total_tokens',
    'total_input_tokens',
    'total_output_tokens',
    'message_count',
  ];
  const tuple = `(${placeholders(columns.length)})`;
  const counters = columns.slice(keyColumns.length).map((c) => `${c} = ${table}.${c} + excluded.${c}`);
  for (const part of upsertSlices(rows))
    await db.query(
      `INSERT INTO ${table} (${columns.join(', ')})
       VALUES ${part.map(() => tuple).join(', ')}
       ON CONFLICT (${keyColumns.join(', ')}) DO UPDATE SET ${counters.join(', ')}`,
      part.flatMap((d) => [...keyOf(d), d.tokens, d.inputTokens, d.outputTokens, d.messages]),
    );
}

export function ingestRepository(db: RawSql) {
  const pg = db.dialect === 'postgres';
  return {
    /**
     * Inserts the messages; a row whose natural key (date, tool_name, message_id, host_name) is
     * already stored (or repeated in `rows`) is skipped. Returns the natural keys really inserted,
     * as [date, tool_name, message_id, host_name].
     */
    async insertMessages(
      rows: ReadonlyArray<MessageRow & { userId: number | null; tenantId: number }>,
    ): Promise<Array<[string, string, string, string]>> {
      const inserted: Array<[string, string, string, string]> = [];
      for (const part of slices(rows, INSERT_ROWS_PER_STATEMENT)) {
        const params: unknown[] = [];
        for (const m of part) {
          params.push(
            m.date,
            m.toolName,
            m.hostName,
            m.messageId,
            m.parentId,
            m.role,
            m.content,
            m.fullEntry,
            m.tokensUsed,
            m.inputTokens,
            m.outputTokens,
            m.model,
            m.timestamp,
            m.senderId,
            m.senderName,
            m.messageSource,
            m.conversationId,
            m.agentSessionId,
            m.userId,
            m.projectPath,
            m.tenantId,
          );
        }
        const got = await db.query<{
          date: string;
          tool_name: string;
          message_id: string;
          host_name: string;
        }>(
          `INSERT INTO daily_messages (${MESSAGE_COLUMNS.join(', ')})
           VALUES ${part.map(() => MESSAGE_PLACEHOLDERS).join(', ')}
           ON CONFLICT (date, tool_name, message_id, host_name) DO NOTHING
           RETURNING date, tool_name, message_id, host_name`,
          params,
        );
        for (const r of got) inserted.push([r.date, r.tool_name, r.message_id, r.host_name]);
      }
      return inserted;
    },

    /** Which of `days` have at least one message (any tenant), by usageDayKey. */
    async daysWithMessages(days: readonly UsageDay[]): Promise<Set<string>> {
      const out = new Set<string>();
      for (const part of slices(days, IN_LIST / 5)) {
        const c = daysCondition(part);
        const rows = await db.query<{ date: string; tool_name: string; host_name: string }>(
          `SELECT DISTINCT date, tool_name, host_name FROM daily_messages WHERE ${c.sql}`,
          c.params,
        );
        for (const r of rows)
          out.add(usageDayKey({ date: r.date, toolName: r.tool_name, hostName: r.host_name }));
      }
      return out;
    },

    /** Owners of tool accounts (user_tool_accounts.tool_account), live users only. */
    async ownersOfToolAccounts(accounts: readonly string[]): Promise<Map<string, SenderOwner>> {
      const out = new Map<string, SenderOwner>();
      for (const part of slices(accounts, IN_LIST)) {
        const rows = await db.query<{ account: string; user_id: number; tenant_id: number | null }>(
          `SELECT a.tool_account AS account, u.id AS user_id, u.tenant_id
           FROM user_tool_accounts a JOIN users u ON u.id = a.user_id
           WHERE u.deleted_at IS NULL AND a.tool_account IN (${placeholders(part.length)})`,
          part,
        );
        for (const r of rows)
          out.set(r.account, {
            userId: Number(r.user_id),
            tenantId: r.tenant_id == null ? null : Number(r.tenant_id),
          });
      }
      return out;
    },

    /** Live users by username. */
    async usersByName(names: readonly string[]): Promise<Map<string, SenderOwner>> {
      const out = new Map<string, SenderOwner>();
      for (const part of slices(names, IN_LIST)) {
        const rows = await db.query<{ username: string; id: number; tenant_id: number | null }>(
          `SELECT username, id, tenant_id FROM users
           WHERE deleted_at IS NULL AND username IN (${placeholders(part.length)})`,
          part,
        );
        for (const r of rows)
          out.set(r.username, {
            userId: Number(r.id),
            tenantId: r.tenant_id == null ? null : Number(r.tenant_id),
          });
      }
      return out;
    },

    /** Adds to daily_stats: one multi-row UPSERT per slice of keys (keys are unique in `rows`). */
    addDailyStats: (rows: readonly DailyStatsDelta[]) =>
      addStatsCounters(db, 'daily_stats', ['date', 'tool_name', 'host_name', 'sender_name'], rows, (d) => [
        d.date,
        d.toolName,
        d.hostName,
        d.senderName,
      ]),

    /** Adds to hourly_stats: one multi-row UPSERT per slice of keys (keys are unique in `rows`). */
    addHourlyStats: (rows: readonly HourlyStatsDelta[]) =>
      addStatsCounters(db, 'hourly_stats', ['date', 'hour', 'tool_name', 'host_name'], rows, (d) => [
        d.date,
        d.hour,
        d.toolName,
        d.hostName,
      ]),

    /**
     * Adds the totals of a tool and host. days_count is the number of distinct days daily_usage has
     * for them (counted by key from the unique index, after daily_usage was written), so avg_tokens =
     * total_tokens / days_count stays exact.
     */
    async addUsageSummary(d: UsageSummaryDelta): Promise<void> {
      await db.query(
        `INSERT INTO usage_summary (tool_name, host_name, days_count, total_tokens, avg_tokens, total_requests,
                                    total_input_tokens, total_output_tokens, first_date, last_date)
         SELECT CAST(? AS TEXT), CAST(? AS TEXT), d.n, CAST(? AS BIGINT),
                CASE WHEN d.n > 0 THEN CAST(? AS BIGINT) * 1.0 / d.n ELSE 0 END,
                CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS TEXT), CAST(? AS TEXT)
         FROM (SELECT COUNT(DISTINCT date) AS n FROM daily_usage WHERE tool_name = ? AND host_name = ?) d
         WHERE 1 = 1
         ON CONFLICT (tool_name, host_name) DO UPDATE SET
           days_count = excluded.days_count,
           total_tokens = usage_summary.total_tokens + excluded.total_tokens,
           avg_tokens = CASE WHEN excluded.days_count > 0
                        THEN (usage_summary.total_tokens + excluded.total_tokens) * 1.0 / excluded.days_count
                        ELSE 0 END,
           total_requests = usage_summary.total_requests + excluded.total_requests,
           total_input_tokens = usage_summary.total_input_tokens + excluded.total_input_tokens,
           total_output_tokens = usage_summary.total_output_tokens + excluded.total_output_tokens,
           first_date = CASE WHEN usage_summary.first_date IS NULL OR excluded.first_date < usage_summary.first_date
                        THEN excluded.first_date ELSE usage_summary.first_date END,
           last_date = CASE WHEN usage_summary.last_date IS NULL OR excluded.last_date > usage_summary.last_date
                       THEN excluded.last_date ELSE usage_summary.last_date END`,
        [
          d.toolName,
          d.hostName,
          d.tokens,
          d.tokens,
          d.requests,
          d.inputTokens,
          d.outputTokens,
          d.firstDate,
          d.lastDate,
          d.toolName,
          d.hostName,
        ],
      );
    },

    async addUserDailyStats(d: UserDayDelta): Promise<void> {
      await db.query(
        `INSERT INTO user_daily_stats (user_id, date, requests, tokens, input_tokens, output_tokens)
         VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (user_id, date) DO UPDATE SET
           requests = user_daily_stats.requests + excluded.requests,
           tokens = user_daily_stats.tokens + excluded.tokens,
           input_tokens = user_daily_stats.input_tokens + excluded.input_tokens,
           output_tokens = user_daily_stats.output_tokens + excluded.output_tokens`,
        [d.userId, d.date, d.requests, d.tokens, d.inputTokens, d.outputTokens],
      );
    },

    /** Adds to an existing session's totals (messages naming an unknown session add nothing here). */
    async addSessionTotals(d: SessionDelta, at: Date): Promise<void> {
      await db.query(
        `UPDATE agent_sessions
         SET total_tokens = total_tokens + ?, total_input_tokens = total_input_tokens + ?,
             total_output_tokens = total_output_tokens + ?, message_count = message_count + ?,
             request_count = request_count + ?, updated_at = ?
         WHERE session_id = ?`,
        [d.tokens, d.inputTokens, d.outputTokens, d.messages, d.requests, at, d.sessionId],
      );
    },

    async addTenantTokens(d: TenantTotalDelta): Promise<void> {
      await db.query('UPDATE tenants SET total_tokens_used = total_tokens_used + ? WHERE id = ?', [
        d.tokens,
        d.tenantId,
      ]);
    },

    /**
     * PostgreSQL: the quota statements switch their transaction to an asynchronous commit (see
     * quota-usage.ts); an upload's commit must be durable, so the session's setting is restored
     * before COMMIT (the setting in force at commit time is the one that counts).
     */
    async restoreDurableCommit(): Promise<void> {
      if (pg) await db.query('SET LOCAL synchronous_commit TO DEFAULT');
    },
  };
}

export type IngestRepository = ReturnType<typeof ingestRepository>;
