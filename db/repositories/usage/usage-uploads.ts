// The only SQL of usage_uploads: the last usage report per tenant, day, tool and host. `replace`
// stores a new report and returns the one it replaced (zeros when it is the first), under the row's lock (PostgreSQL: the row is
// created if missing, then locked FOR UPDATE; SQLite has one writer), so two concurrent uploads of
// the same key each see the other's figures and their differences add up exactly.
import type { UsageFigures } from '../../../domain/usage/ingest-aggregate.ts';
import type { UsageRow } from '../../../domain/usage/ingest-rows.ts';
import type { RawSql } from '../../client.ts';

export function usageUploadsRepository(db: RawSql) {
  const pg = db.dialect === 'postgres';
  return {
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
