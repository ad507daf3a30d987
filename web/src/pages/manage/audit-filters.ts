// The audit log page's filters as the API's query (GET /api/audit/logs: user_id, username, action,
// resource_type, severity, start_date, end_date, limit, offset) and the export link
// (GET /api/audit/logs/export?format=csv|json&start_date&end_date: the export takes the date range
// only). Pure: unit-tested in test/unit/web-manage-audit.test.ts.

export interface AuditFilters {
  username: string;
  action: string;
  resource_type: string;
  severity: string;
  start_date: string;
  end_date: string;
}

export const EMPTY_AUDIT_FILTERS: AuditFilters = {
  username: '',
  action: '',
  resource_type: '',
  severity: '',
  start_date: '',
  end_date: '',
};

export const AUDIT_PAGE_SIZE = 50;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** A problem with the filters in words (the API would answer 400), or null. */
export function auditFilterProblem(f: AuditFilters): string | null {
  for (const k of ['start_date', 'end_date'] as const)
    if (f[k] && !DATE.test(f[k])) return `${k === 'start_date' ? 'From' : 'To'} must be a date YYYY-MM-DD`;
  if (f.start_date && f.end_date && f.start_date > f.end_date) return 'From must not be after To';
  if (f.username.length > 100 || f.action.length > 100) return 'Filters are at most 100 characters';
  return null;
}

/** The list query: trimmed, empty filters left out, page -> offset. */
export function auditQuery(f: AuditFilters, page: number): Record<string, string | number> {
  const q: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(f)) {
    const s = v.trim();
    if (s) q[k] = s;
  }
  q.limit = AUDIT_PAGE_SIZE;
  q.offset = Math.max(0, Math.floor(page)) * AUDIT_PAGE_SIZE;
  return q;
}

/** The export link for a format, carrying the date range of the filters. */
export function auditExportHref(f: AuditFilters, format: 'csv' | 'json'): string {
  const qs = new URLSearchParams({ format });
  if (f.start_date.trim()) qs.set('start_date', f.start_date.trim());
  if (f.end_date.trim()) qs.set('end_date', f.end_date.trim());
  return `/api/audit/logs/export?${qs.toString()}`;
}

/** "Showing 51–100 of 1,234" style bounds for a page (1-based, inclusive). */
export function pageBounds(page: number, total: number): { from: number; to: number; pages: number } {
  const pages = Math.max(1, Math.ceil(total / AUDIT_PAGE_SIZE));
  if (total === 0) return { from: 0, to: 0, pages };
  const from = page * AUDIT_PAGE_SIZE + 1;
  return { from, to: Math.min(total, from + AUDIT_PAGE_SIZE - 1), pages };
}

/** A compact one-line view of an audit record's details for the table (full JSON in the title). */
export function detailsSummary(details: unknown, max = 120): string {
  if (details == null) return '';
  const s = typeof details === 'string' ? details : JSON.stringify(details);
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}
