// The only SQL of saved compliance reports (compliance_reports, migration 0018): save, list and fetch
// inside a read scope (domain/tenant-scope.ts; platform-wide reports have tenant_id NULL and are seen
// only by system administrators).

import type { ReadScope } from '../../../domain/tenant-scope.ts';
import type { DatabaseHandle } from '../../client.ts';
import { rawScopeCondition } from '../../tenant-scope-sql.ts';

export interface SavedReportInsert {
  reportId: string;
  tenantId: number | null;
  reportType: string;
  periodStart: string;
  periodEnd: string;
  format: 'json' | 'csv';
  createdBy: number | null;
  createdAt: Date;
  summary: Record<string, unknown>;
  content: string;
}

export interface SavedReportRow {
  report_id: string;
  tenant_id: number | null;
  report_type: string;
  period_start: string;
  period_end: string;
  format: string;
  created_by: number | null;
  created_at: Date;
  summary: string | null;
  content?: string;
}

const COLUMNS =
  'report_id, tenant_id, report_type, period_start, period_end, format, created_by, created_at, summary';

export function complianceReportsRepository({ sql }: DatabaseHandle) {
  const normalize = (r: SavedReportRow): SavedReportRow => ({
    ...r,
    tenant_id: r.tenant_id == null ? null : Number(r.tenant_id),
    created_by: r.created_by == null ? null : Number(r.created_by),
    created_at: r.created_at instanceof Date ? r.created_at : new Date(Number(r.created_at)),
  });
  const scoped = (scope: ReadScope) => {
    const c = rawScopeCondition(scope, 'tenant_id');
    if (c === false) return false;
    return c ?? { sql: '1 = 1', params: [] as number[] };
  };

  return {
    async insert(r: SavedReportInsert): Promise<void> {
      await sql.query(
        `INSERT INTO compliance_reports (${COLUMNS}, content) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          r.reportId,
          r.tenantId,
          r.reportType,
          r.periodStart,
          r.periodEnd,
          r.format,
          r.createdBy,
          r.createdAt,
          JSON.stringify(r.summary),
          r.content,
        ],
      );
    },

    async list(scope: ReadScope, page: { limit: number; offset: number }): Promise<SavedReportRow[]> {
      const c = scoped(scope);
      if (c === false) return [];
      const rows = await sql.query<SavedReportRow>(
        `SELECT ${COLUMNS} FROM compliance_reports WHERE ${c.sql} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
        [...c.params, page.limit, page.offset],
      );
      return rows.map(normalize);
    },

    async get(scope: ReadScope, reportId: string): Promise<SavedReportRow | undefined> {
      const c = scoped(scope);
      if (c === false) return undefined;
      const [row] = await sql.query<SavedReportRow>(
        `SELECT ${COLUMNS}, content FROM compliance_reports WHERE report_id = ? AND ${c.sql}`,
        [reportId, ...c.params],
      );
      return row ? normalize(row) : undefined;
    },
  };
}
