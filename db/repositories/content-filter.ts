// The only SQL of the content filter (issue 11 item 1): content_filter_rules (CRUD; a tenant's
// effective rules are the global ones, tenant_id NULL, plus its own), the content_filter_version row
// (bumped in the same statement batch as every rule write, read by every instance to invalidate its
// compiled rules), the tenants' content_filter_enabled flags, flagging uploaded messages
// (daily_messages.filter_verdict) and the counts behind GET /api/content/filter/stats.

import type {
  FilterAction,
  FilterMatch,
  FilterRule,
  FilterRuleType,
  FilterSeverity,
} from '../../domain/content-filter/rules.ts';
import type { RawSql } from '../client.ts';
import { isoOf } from './usage/read-where.ts';

const COLUMNS =
  'id, pattern, type, severity, action, description, is_enabled, tenant_id, created_at, updated_at';

export type FilterRuleRow = FilterRule & { createdAt: string | null; updatedAt: string | null };

export interface FilterRuleInput {
  pattern: string;
  type: FilterRuleType;
  severity: FilterSeverity;
  action: FilterAction;
  description: string | null;
  isEnabled: boolean;
  tenantId: number | null;
}

const truthy = (v: unknown) => v === true || v === 1 || v === '1' || v === 't' || v === 'true';

function rowOf(r: Record<string, unknown>): FilterRuleRow {
  return {
    id: Number(r.id),
    pattern: String(r.pattern),
    type: r.type as FilterRuleType,
    severity: r.severity as FilterSeverity,
    action: r.action as FilterAction,
    description: (r.description as string | null) ?? null,
    isEnabled: truthy(r.is_enabled),
    tenantId: r.tenant_id == null ? null : Number(r.tenant_id),
    createdAt: isoOf(r.created_at),
    updatedAt: isoOf(r.updated_at),
  };
}

/** Which rules a listing shows: every rule, or the global ones plus one tenant's. */
export type RuleVisibility = { kind: 'all' } | { kind: 'tenant'; tenantId: number };

export function contentFilterRepository(sql: RawSql) {
  const bump = () => sql.query('UPDATE content_filter_version SET version = version + 1 WHERE id = 1');

  return {
    async list(v: RuleVisibility): Promise<FilterRuleRow[]> {
      const rows =
        v.kind === 'all'
          ? await sql.query(`SELECT ${COLUMNS} FROM content_filter_rules ORDER BY id`)
          : await sql.query(
              `SELECT ${COLUMNS} FROM content_filter_rules WHERE tenant_id IS NULL OR tenant_id = ? ORDER BY id`,
              [v.tenantId],
            );
      return rows.map(rowOf);
    },

    async get(id: number): Promise<FilterRuleRow | undefined> {
      const [r] = await sql.query(`SELECT ${COLUMNS} FROM content_filter_rules WHERE id = ?`, [id]);
      return r === undefined ? undefined : rowOf(r);
    },

    async create(input: FilterRuleInput, at: Date): Promise<FilterRuleRow> {
      const [r] = await sql.query(
        `INSERT INTO content_filter_rules (pattern, type, severity, action, description, is_enabled, tenant_id, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING ${COLUMNS}`,
        [
          input.pattern,
          input.type,
          input.severity,
          input.action,
          input.description,
          input.isEnabled,
          input.tenantId,
          at,
          at,
        ],
      );
      await bump();
      return rowOf(r!);
    },

    async update(id: number, input: FilterRuleInput, at: Date): Promise<FilterRuleRow | undefined> {
      const [r] = await sql.query(
        `UPDATE content_filter_rules SET pattern = ?, type = ?, severity = ?, action = ?, description = ?,
           is_enabled = ?, tenant_id = ?, updated_at = ? WHERE id = ? RETURNING ${COLUMNS}`,
        [
          input.pattern,
          input.type,
          input.severity,
          input.action,
          input.description,
          input.isEnabled,
          input.tenantId,
          at,
          id,
        ],
      );
      await bump();
      return r === undefined ? undefined : rowOf(r);
    },

    async remove(id: number): Promise<boolean> {
      const rows = await sql.query('DELETE FROM content_filter_rules WHERE id = ? RETURNING id', [id]);
      await bump();
      return rows.length > 0;
    },

    /**
     * What a cached instance compares to know whether it is stale: the rule version and the newest
     * tenant_settings change (content_filter_enabled is written by the tenant API).
     */
    async stamp(): Promise<string> {
      const [r] = await sql.query<{ version: unknown; settings_at: unknown }>(
        `SELECT (SELECT version FROM content_filter_version WHERE id = 1) AS version,
                (SELECT MAX(updated_at) FROM tenant_settings) AS settings_at`,
      );
      return `${r?.version ?? 0}:${isoOf(r?.settings_at) ?? ''}`;
    },

    /** content_filter_enabled of a tenant (a tenant without a settings row has the default, true). */
    async filterEnabled(tenantId: number): Promise<boolean> {
      const [r] = await sql.query<{ content_filter_enabled: unknown }>(
        'SELECT content_filter_enabled FROM tenant_settings WHERE tenant_id = ?',
        [tenantId],
      );
      return r === undefined ? true : truthy(r.content_filter_enabled);
    },

    /** Stores the verdict of uploaded messages, by natural key. */
    async flagMessages(
      rows: ReadonlyArray<{
        date: string;
        toolName: string;
        messageId: string;
        hostName: string;
        verdict: string;
        /** The matched rules, stored as JSON in filter_rules (shown with the message). */
        rules: readonly FilterMatch[];
      }>,
    ): Promise<void> {
      for (const m of rows) {
        await sql.query(
          `UPDATE daily_messages SET filter_verdict = ?, filter_rules = ?
           WHERE date = ? AND tool_name = ? AND message_id = ? AND host_name = ?`,
          [m.verdict, JSON.stringify(m.rules), m.date, m.toolName, m.messageId, m.hostName],
        );
      }
    },

    /** Flagged messages per verdict, inside the scope condition (undefined: every tenant). */
    async flaggedCounts(
      scope: { sql: string; params: number[] } | undefined,
    ): Promise<Record<string, number>> {
      const rows = await sql.query<{ verdict: string; n: unknown }>(
        `SELECT filter_verdict AS verdict, COUNT(*) AS n FROM daily_messages
         WHERE filter_verdict IS NOT NULL${scope ? ` AND ${scope.sql}` : ''} GROUP BY filter_verdict`,
        scope?.params ?? [],
      );
      const out: Record<string, number> = {};
      for (const r of rows) out[r.verdict] = Number(r.n);
      return out;
    },
  };
}

export type ContentFilterRepository = ReturnType<typeof contentFilterRepository>;
