// The only SQL of usage_uploads: the last usage report per tenant, day, tool and host, and the lock of
// a day of a tool on a host that decides whether its report counts (domain/usage/counting.ts). `replace`
// stores a new report and returns the one it replaced (zeros when it is the first), under the row's lock (PostgreSQL: the row is
// created if missing, then locked FOR UPDATE; SQLite has one writer), so two concurrent uploads of
// the same key each see the other's figures and their differences add up exactly.

import type { UsageDay } from '../../../domain/usage/counting.ts';
import type { UsageRow } from '../../../domain/usage/ingest-rows.ts';
import type { UsageFigures } from '../../../domain/usage/usage-figures.ts';
import type { RawSql } from '../../client.ts';

/** One stored report with its key. */
export interface StoredReport extends UsageDay {
  tenantId: number;
  figures: UsageFigures;
}

/** `(date = ? AND tool_name = ? AND host_name = ?) OR ...` over `days`, with its parameters. */
export function daysCondition(days: readonly UsageDay[], alias = ''): { sql: string; params: unknown[] } {
  const a = alias ? `${alias}.` : '';
  return {
    sql: days.map(() => `(${a}date = ? AND ${a}tool_name = ? AND ${a}host_name = ?)`).join(' OR '),
    params: days.flatMap((d) => [d.date, d.toolName, d.hostName]),
  };
}

export function usageUploadsRepository(db: RawSql) {
  const pg = db.dialect === 'postgres';
  return {
    /**
     * PostgreSQL: takes a transaction lock per day (in the order given, sorted by the caller), the one
     * both the message and the report uploads take before deciding whether a report counts, so one of
     * two concurrent uploads of the same day always sees the other's committed rows. SQLite has one
     * writer.
     */
    async lockDays(days: readonly UsageDay[]): Promise<void> {
      if (!pg) return;
      for (const d of days)
        await db.query('SELECT pg_advisory_xact_lock(hashtext(?)) AS locked', [
          `usage-day|${d.date}|${d.toolName}|${d.hostName}`,
        ]);
    },

    /** The stored reports of these days, every tenant's. */
    async reportsOn(days: readonly UsageDay[]): Promise<StoredReport[]> {
      if (days.length === 0) return [];
      const c = daysCondition(days);
      const rows = await db.query<Record<string, unknown>>(
        `SELECT tenant_id, date, tool_name, host_name, tokens_used, input_tokens, output_tokens, cache_tokens,
                request_count
         FROM usage_uploads WHERE ${c.sql} ORDER BY tenant_id, date, tool_name, host_name`,
        c.params,
      );
      return rows.map((r) => ({
        tenantId: Number(r.tenant_id),
        date: String(r.date),
        toolName: String(r.tool_name),
        hostName: String(r.host_name),
        figures: {
          tokensUsed: Number(r.tokens_used ?? 0),
          inputTokens: Number(r.input_tokens ?? 0),
          outputTokens: Number(r.output_tokens ?? 0),
          cacheTokens: Number(r.cache_tokens ?? 0),
          requestCount: Number(r.request_count ?? 0),
        },
      }));
    },

    async replace(
      tenantId: number,
      row: UsageRow,
      at: Date,
    ): Promise<{ created: boolean; before: UsageFigures; modelsBefore: string | null }> {
      const key = [tenantId, row.date, row.toolName, row.hostName];
      const created = await db.query(
        `INSERT INTO usage_uploads (tenant_id, date, tool_name, host_name, updated_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (tenant_id, date, tool_name, host_name) DO NOTHING RETURNING id`,
        [...key, at],
      );
      const [old] = await db.query<Record<string, unknown>>(
        `SELECT tokens_used, input_tokens, output_tokens, cache_tokens, request_count, models_used
         FROM usage_uploads WHERE tenant_id = ? AND date = ? AND tool_name = ? AND host_name = ?${pg ? ' FOR UPDATE' : ''}`,
        key,
      );
      await db.query(
        `UPDATE usage_uploads SET tokens_used = ?, input_tokens = ?, output_tokens = ?, cache_tokens = ?,
                request_count = ?, models_used = ?, updated_at = ?
         WHERE tenant_id = ? AND date = ? AND tool_name = ? AND host_name = ?`,
        [
          row.tokensUsed,
          row.inputTokens,
          row.outputTokens,
          row.cacheTokens,
          row.requestCount,
          row.modelsUsed,
          at,
          ...key,
        ],
      );
      return {
        created: created.length > 0,
        before: {
          tokensUsed: Number(old?.tokens_used ?? 0),
          inputTokens: Number(old?.input_tokens ?? 0),
          outputTokens: Number(old?.output_tokens ?? 0),
          cacheTokens: Number(old?.cache_tokens ?? 0),
          requestCount: Number(old?.request_count ?? 0),
        },
        modelsBefore: (old?.models_used as string | null | undefined) ?? null,
      };
    },
  };
}
