// The usage report page's data shaping, pure (no DOM; test/unit/web-usage-report.test.ts): the date
// presets, the sort of the table, and the CSV and JSON exports. Both exports are built from the rows
// exactly as the table shows them (same rows, same order, same figures: the API's numbers, unformatted),
// so a downloaded file never disagrees with the screen.

// The row and grouping types are the API's own (GET /api/usage/report groups with these).
import type { ReportGroup, ReportRow } from '../../../../domain/usage/report-rows.ts';

export type { ReportRow };
export type GroupBy = ReportGroup;
export type Figures = Omit<ReportRow, 'key' | 'label'>;

export interface UsageReport {
  period: { start_date: string; end_date: string };
  group_by: GroupBy;
  own_figures_only: boolean;
  cost_currency: string;
  note: string;
  rows: ReportRow[];
  totals: Figures;
}

export const GROUP_WORDS: Record<GroupBy, string> = {
  user: 'User',
  tool: 'Tool',
  model: 'Model',
  tenant: 'Tenant',
};

export type SortKey = 'label' | keyof Figures;
export interface Sort {
  key: SortKey;
  dir: 'ascending' | 'descending';
}

/** Whether the report carries the CLIs' measured figures (OpenTelemetry; null columns otherwise). */
export const hasMeasured = (report: Pick<UsageReport, 'totals'>) => report.totals.active_hours != null;

/**
 * The table's columns in order, with their header words (the CSV header uses the same words); the
 * measured columns only when the report has such figures.
 */
export function reportColumns(
  by: GroupBy,
  currency: string,
  measured = false,
): { key: SortKey; header: string }[] {
  const columns: { key: SortKey; header: string }[] = [
    { key: 'label', header: GROUP_WORDS[by] },
    { key: 'input_tokens', header: 'Input tokens' },
    { key: 'output_tokens', header: 'Output tokens' },
    { key: 'tokens', header: 'Total tokens' },
    { key: 'requests', header: 'Requests' },
    { key: 'cost', header: `Estimated cost (${currency})` },
  ];
  if (!measured) return columns;
  return [
    ...columns,
    { key: 'lines_added', header: 'Lines added' },
    { key: 'lines_removed', header: 'Lines removed' },
    { key: 'commits', header: 'Commits' },
    { key: 'pull_requests', header: 'Pull requests' },
    { key: 'edit_accept_rate', header: 'Edit accept rate (%)' },
    { key: 'active_hours', header: 'Active hours' },
  ];
}

/** The sort after a click on `key`'s header: the same column flips, another starts at its natural order. */
export function nextSort(current: Sort, key: SortKey): Sort {
  if (current.key === key) return { key, dir: current.dir === 'ascending' ? 'descending' : 'ascending' };
  return { key, dir: key === 'label' ? 'ascending' : 'descending' };
}

/** The rows in the chosen order; ties keep the API's order (most tokens first). */
export function sortRows(rows: readonly ReportRow[], sort: Sort): ReportRow[] {
  const sign = sort.dir === 'ascending' ? 1 : -1;
  return rows
    .map((row, i) => ({ row, i }))
    .sort((a, b) => {
      const x = a.row[sort.key];
      const y = b.row[sort.key];
      const c =
        typeof x === 'number' && typeof y === 'number'
          ? x - y
          : String(x).localeCompare(String(y), undefined, { sensitivity: 'base' });
      return c * sign || a.i - b.i;
    })
    .map((r) => r.row);
}

const DAY_MS = 86_400_000;
const utcDay = (t: number) => new Date(t).toISOString().slice(0, 10);

export const PRESETS = [
  { value: 'last7', label: 'Last 7 days' },
  { value: 'lastweek', label: 'Last week (Monday to Sunday)' },
  { value: 'last30', label: 'Last 30 days' },
  { value: 'custom', label: 'Custom dates' },
] as const;
export type Preset = (typeof PRESETS)[number]['value'];

/** The UTC days of a preset seen on `now`; "last week" is the whole calendar week before this one. */
export function presetRange(preset: Exclude<Preset, 'custom'>, now: Date): { start: string; end: string } {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  if (preset === 'last7') return { start: utcDay(today - 6 * DAY_MS), end: utcDay(today) };
  if (preset === 'last30') return { start: utcDay(today - 29 * DAY_MS), end: utcDay(today) };
  const sinceMonday = (new Date(today).getUTCDay() + 6) % 7;
  const lastMonday = today - (sinceMonday + 7) * DAY_MS;
  return { start: utcDay(lastMonday), end: utcDay(lastMonday + 6 * DAY_MS) };
}

/** A CSV cell: quoted when needed; text a spreadsheet would run as a formula is prefixed with '. */
function csvCell(v: string | number | null | undefined): string {
  if (v == null) return '';
  if (typeof v === 'number') return String(v);
  const safe = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** The table as CSV: the header words, the shown rows in their order, then the totals row. */
export function reportCsv(report: UsageReport, rows: readonly ReportRow[]): string {
  const columns = reportColumns(report.group_by, report.cost_currency, hasMeasured(report));
  const figuresOf = (f: Figures) => columns.slice(1).map((c) => f[c.key as keyof Figures]);
  const lines = [
    columns.map((c) => c.header),
    ...rows.map((r) => [r.label, ...figuresOf(r)]),
    ['Total', ...figuresOf(report.totals)],
  ];
  return `${lines.map((l) => l.map(csvCell).join(',')).join('\r\n')}\r\n`;
}

/** The table as JSON: the period, grouping and sort with the shown rows in their order and the totals. */
export function reportJson(report: UsageReport, rows: readonly ReportRow[], sort: Sort): string {
  return `${JSON.stringify(
    {
      period: report.period,
      group_by: report.group_by,
      sort: { column: sort.key, direction: sort.dir },
      cost_currency: report.cost_currency,
      estimate: true,
      note: report.note,
      rows,
      totals: report.totals,
    },
    null,
    2,
  )}\n`;
}

/** The download's file name: usage-<group>-<start>-to-<end>.<ext>. */
export const exportName = (report: UsageReport, ext: 'csv' | 'json') =>
  `usage-by-${report.group_by}-${report.period.start_date}-to-${report.period.end_date}.${ext}`;
