// The SQL of POST /api/summary/refresh (workflows/usage/summary-refresh.ts): recomputes the
// message-derived aggregates from their sources, giving exactly what the incremental path
// (services/usage/ingest.ts) holds:
//   daily_stats       messages per (date, tool, host, sender_name or '')
//   hourly_stats      messages per (date, UTC hour of timestamp or 0, tool, host)
//   user_daily_stats  messages of known users per (user, date); requests = assistant messages
//   usage_summary     messages + the last usage report of each day without messages (usage_uploads,
//                     tokens only: domain/usage/counting.ts) per (tool, host);
//                     days_count = distinct days of daily_usage for the tool and host (as ingestion sets
//                     it), avg_tokens = total_tokens / days_count. Ingestion reads days_count at its
//                     last write; a day that only proxied calls added since then is counted here first.
// daily_usage, tenant_usage, quota_usage and the session totals also hold proxied calls that have no
// message row, so they are not recomputed here.
//
// Date-keyed tables are recomputed per date range (one transaction each: delete the range's rows,
// insert them again from daily_messages), so a year of data is many short transactions. On PostgreSQL
// each transaction first takes an EXCLUSIVE lock on its table: a concurrent upload's UPSERT then waits
// for the commit and adds its message on top of the recomputed row, or the upload committed before the
// lock and its message is in the recompute's snapshot; either way it is counted once. (SQLite has one
// writer.) With `host`, only that host's rows are recomputed; user_daily_stats has no host, so the
// (user, date) rows that host's messages touch are recomputed whole.
import type { DatabaseHandle, RawSql } from '../../client.ts';
import { REQUESTS_OF } from './read-requests.ts';

export const DATE_KEYED_TABLES = ['daily_stats', 'hourly_stats', 'user_daily_stats'] as const;
export type DateKeyedTable = (typeof DATE_KEYED_TABLES)[number];
export type RecomputedTable = DateKeyedTable | 'usage_summary';

const hostOnly = (host: string | null, column = 'host_name') =>
  host === null ? { sql: '', params: [] as unknown[] } : { sql: ` AND ${column} = ?`, params: [host] };

/** The rows of user_daily_stats a host's messages touch (alias `x` is the outer row). */
const touchedByHost = (x: string) =>
  ` AND EXISTS (SELECT 1 FROM daily_messages h WHERE h.user_id = ${x}.user_id AND h.date = ${x}.date AND h.host_name = ?)`;

export function recomputeRepository(database: DatabaseHandle) {
  const pg = database.dialect === 'postgres';
  const hourOf = pg
    ? `COALESCE(CAST(EXTRACT(HOUR FROM "timestamp" AT TIME ZONE 'UTC') AS INTEGER), 0)`
    : `COALESCE(("timestamp" / 3600000) % 24, 0)`;

  async function locked<T>(table: RecomputedTable, run: (sql: RawSql) => Promise<T>): Promise<T> {
    return database.transaction(async ({ sql }) => {
      if (pg) await sql.query(`LOCK TABLE ${table} IN EXCLUSIVE MODE`);
      return run(sql);
    });
  }

  /** Deletes then re-inserts one table's rows of [from, to]; returns the rows inserted. */
  async function rewrite(sql: RawSql, table: DateKeyedTable, host: string | null, from: string, to: string) {
    const h = hostOnly(host);
    const range = [from, to];
    if (table === 'daily_stats') {
      await sql.query(`DELETE FROM daily_stats WHERE date >= ? AND date <= ?${h.sql}`, [
        ...range,
        ...h.params,
      ]);
      return sql.query<{ n: unknown }>(
        `INSERT INTO daily_stats (date, tool_name, host_name, sender_name, total_tokens, total_input_tokens,
                                  total_output_tokens, message_count)
         SELECT date, tool_name, host_name, COALESCE(sender_name, ''), SUM(tokens_used), SUM(input_tokens),
                SUM(output_tokens), COUNT(*)
         FROM daily_messages WHERE date >= ? AND date <= ?${h.sql}
         GROUP BY date, tool_name, host_name, COALESCE(sender_name, '')
         RETURNING 1 AS n`,
        [...range, ...h.params],
      );
    }
    if (table === 'hourly_stats') {
      await sql.query(`DELETE FROM hourly_stats WHERE date >= ? AND date <= ?${h.sql}`, [
        ...range,
        ...h.params,
      ]);
      return sql.query<{ n: unknown }>(
        `INSERT INTO hourly_stats (date, hour, tool_name, host_name, total_tokens, total_input_tokens,
                                   total_output_tokens, message_count)
         SELECT date, ${hourOf}, tool_name, host_name, SUM(tokens_used), SUM(input_tokens), SUM(output_tokens),
                COUNT(*)
         FROM daily_messages WHERE date >= ? AND date <= ?${h.sql}
         GROUP BY date, ${hourOf}, tool_name, host_name
         RETURNING 1 AS n`,
        [...range, ...h.params],
      );
    }
    const touched = host === null ? '' : touchedByHost('user_daily_stats');
    await sql.query(`DELETE FROM user_daily_stats WHERE date >= ? AND date <= ?${touched}`, [
      ...range,
      ...h.params,
    ]);
    return sql.query<{ n: unknown }>(
      `INSERT INTO user_daily_stats (user_id, date, requests, tokens, input_tokens, output_tokens)
       SELECT m.user_id, m.date, ${REQUESTS_OF('m')}, SUM(m.tokens_used),
              SUM(m.input_tokens), SUM(m.output_tokens)
       FROM daily_messages m
       WHERE m.user_id IS NOT NULL AND m.user_id IN (SELECT id FROM users)
         AND m.date >= ? AND m.date <= ?${host === null ? '' : touchedByHost('m')}
       GROUP BY m.user_id, m.date
       RETURNING 1 AS n`,
      [...range, ...h.params],
    );
  }

  return {
    /** First and last date of daily_messages (of the host), null when there is none. */
    async messageDateRange(host: string | null): Promise<{ first: string | null; last: string | null }> {
      const h = hostOnly(host);
      const [row] = await database.sql.query<{ first: string | null; last: string | null }>(
        `SELECT MIN(date) AS first, MAX(date) AS last FROM daily_messages WHERE 1 = 1${h.sql}`,
        h.params,
      );
      return { first: row?.first ?? null, last: row?.last ?? null };
    },

    /**
     * Deletes a date-keyed table's rows outside [first, last] (all of them when there are no messages):
     * no message backs them. user_daily_stats with a host is left alone (its rows are not per host).
     */
    async clearOutside(
      table: DateKeyedTable,
      host: string | null,
      first: string | null,
      last: string | null,
    ): Promise<number> {
      if (table === 'user_daily_stats' && host !== null) return 0;
      const h = hostOnly(host);
      return locked(table, async (sql) => {
        const outside = first === null || last === null ? '1 = 1' : '(date < ? OR date > ?)';
        const params = first === null || last === null ? [] : [first, last];
        const rows = await sql.query(`DELETE FROM ${table} WHERE ${outside}${h.sql} RETURNING 1 AS n`, [
          ...params,
          ...h.params,
        ]);
        return rows.length;
      });
    },

    /** Recomputes one table's rows of the days [from, to] in one transaction; returns the rows written. */
    async recomputeRange(
      table: DateKeyedTable,
      host: string | null,
      from: string,
      to: string,
    ): Promise<number> {
      return locked(table, async (sql) => (await rewrite(sql, table, host, from, to)).length);
    },

    /** Recomputes usage_summary (the host's rows, or all) in one transaction; returns the rows written. */
    async recomputeUsageSummary(host: string | null): Promise<number> {
      const h = hostOnly(host);
      const hu = hostOnly(host, 'u.host_name');
      return locked('usage_summary', async (sql) => {
        await sql.query(`DELETE FROM usage_summary WHERE 1 = 1${h.sql}`, h.params);
        const rows = await sql.query(
          `INSERT INTO usage_summary (tool_name, host_name, days_count, total_tokens, avg_tokens, total_requests,
                                      total_input_tokens, total_output_tokens, first_date, last_date)
           SELECT s.tool_name, s.host_name, COALESCE(d.n, 0), s.tokens,
                  CASE WHEN COALESCE(d.n, 0) > 0 THEN s.tokens * 1.0 / d.n ELSE 0 END,
                  s.requests, s.input_tokens, s.output_tokens, s.first_date, s.last_date
           FROM (
             SELECT tool_name, host_name, CAST(SUM(tokens) AS BIGINT) AS tokens,
                    CAST(SUM(input_tokens) AS BIGINT) AS input_tokens,
                    CAST(SUM(output_tokens) AS BIGINT) AS output_tokens,
                    CAST(SUM(requests) AS BIGINT) AS requests, MIN(first_date) AS first_date,
                    MAX(last_date) AS last_date
             FROM (
               SELECT tool_name, host_name, SUM(tokens_used) AS tokens, SUM(input_tokens) AS input_tokens,
                      SUM(output_tokens) AS output_tokens,
                      ${REQUESTS_OF('daily_messages')} AS requests,
                      MIN(date) AS first_date, MAX(date) AS last_date
               FROM daily_messages WHERE 1 = 1${h.sql}
               GROUP BY tool_name, host_name
               UNION ALL
               SELECT u.tool_name, u.host_name, SUM(u.tokens_used), SUM(u.input_tokens), SUM(u.output_tokens),
                      0, MIN(u.date), MAX(u.date)
               FROM usage_uploads u
               WHERE NOT EXISTS (SELECT 1 FROM daily_messages dm WHERE dm.date = u.date
                                   AND dm.tool_name = u.tool_name AND dm.host_name = u.host_name)${hu.sql}
               GROUP BY u.tool_name, u.host_name
             ) parts
             GROUP BY tool_name, host_name
           ) s
           LEFT JOIN (SELECT tool_name, host_name, COUNT(DISTINCT date) AS n FROM daily_usage
                      GROUP BY tool_name, host_name) d
             ON d.tool_name = s.tool_name AND d.host_name = s.host_name
           RETURNING 1 AS n`,
          [...h.params, ...hu.params],
        );
        return rows.length;
      });
    },
  };
}

export type RecomputeRepository = ReturnType<typeof recomputeRepository>;
