// The usage report (GET /api/usage/report, the web app's /reports/usage), pure: the priced usage cells
// of the ROI module (domain/roi/figures.ts priceCells: daily_messages by day, tool, model, user and
// tenant, plus the daily_usage remainder without messages) grouped by one dimension, with tokens
// (input, output, total), requests (rule 3: assistant messages) and the estimated cost (the effective
// price table, domain/roi/prices.ts). Every cell lands in exactly one row, so the rows add up to the
// totals whatever the grouping, and nothing is counted twice: a usage report that a day's messages
// already cover is not in daily_usage's remainder (docs/administrators/usage-analytics-and-roi.md "Reading usage", the usage-figures rules).
// The CLIs' measured figures (lines, commits, pull requests, edit accept rate, active hours; issue 29
// item 2) are columns of the rows grouped by user, tool or tenant when the report has any (null in a
// row without them); a model grouping has them null (the figures are per day, tool and user, not per
// model). A report without any has no such columns.
import { type PricedCell, totalsOf } from '../roi/figures.ts';
import { productivityOf, productivityView } from '../roi/measured.ts';
import { money } from '../roi/prices.ts';

export const REPORT_GROUPS = ['user', 'tool', 'model', 'tenant'] as const;
export type ReportGroup = (typeof REPORT_GROUPS)[number];

export interface ReportRow {
  /** user_id, tool_name, model or tenant_id; null for usage without one (e.g. proxied calls' users). */
  key: string | number | null;
  /** What a person reads: username, tool, model or tenant name. */
  label: string;
  input_tokens: number;
  output_tokens: number;
  tokens: number;
  requests: number;
  /** USD, rounded to 4 decimals. */
  cost: number;
  lines_added?: number | null;
  lines_removed?: number | null;
  commits?: number | null;
  pull_requests?: number | null;
  /** Percent of the edit (or tool) decisions that were accepted; null without decisions. */
  edit_accept_rate?: number | null;
  active_hours?: number | null;
}

/** The measured columns of a row (all null when none). */
function measuredColumns(cells: readonly PricedCell[]) {
  const v = productivityView(productivityOf(cells));
  return {
    lines_added: v?.lines_added ?? null,
    lines_removed: v?.lines_removed ?? null,
    commits: v?.commits ?? null,
    pull_requests: v?.pull_requests ?? null,
    edit_accept_rate: v?.edit_accept_rate ?? null,
    active_hours: v?.active_hours ?? null,
  };
}
const NO_MEASURED = measuredColumns([]);
const anyMeasured = (cells: readonly PricedCell[]) => cells.some((c) => c.productivity);

/** The label of a row without a key, per grouping (said in words, never an empty cell). */
export const NO_KEY_LABEL: Record<ReportGroup, string> = {
  user: 'Unattributed (no known user)',
  tool: '(no tool)',
  model: '(no model)',
  tenant: '(no tenant)',
};

function keyOf(c: PricedCell, by: ReportGroup): string | number | null {
  if (by === 'user') return c.userId;
  if (by === 'tool') return c.toolName;
  if (by === 'model') return c.model;
  return c.tenantId ?? null;
}

function labelOf(
  key: string | number,
  by: ReportGroup,
  cells: PricedCell[],
  tenantNames: Map<number, string>,
) {
  if (by === 'user') return cells.find((c) => c.username !== null)?.username ?? `user ${key}`;
  if (by === 'tenant') return tenantNames.get(key as number) ?? `tenant ${key}`;
  return String(key);
}

/** One row per key, most tokens first (ties by label), figures summed over the key's cells. */
export function reportRows(
  cells: readonly PricedCell[],
  by: ReportGroup,
  tenantNames: Map<number, string> = new Map(),
): ReportRow[] {
  const measured = anyMeasured(cells);
  const groups = new Map<string | number | null, PricedCell[]>();
  for (const c of cells) {
    const k = keyOf(c, by);
    const g = groups.get(k);
    if (g) g.push(c);
    else groups.set(k, [c]);
  }
  const rows = [...groups.entries()].map(([key, g]): ReportRow => {
    const t = totalsOf(g);
    return {
      key,
      label: key === null ? NO_KEY_LABEL[by] : labelOf(key, by, g, tenantNames),
      input_tokens: t.inputTokens,
      output_tokens: t.outputTokens,
      tokens: t.tokens,
      requests: t.requests,
      cost: money(t.cost),
      ...(!measured ? {} : by === 'model' ? NO_MEASURED : measuredColumns(g)),
    };
  });
  return rows.sort((a, b) => b.tokens - a.tokens || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
}

/** The report's totals (cost summed unrounded, then rounded once). */
export function reportTotals(cells: readonly PricedCell[]) {
  const t = totalsOf(cells);
  return {
    input_tokens: t.inputTokens,
    output_tokens: t.outputTokens,
    tokens: t.tokens,
    requests: t.requests,
    cost: money(t.cost),
    ...(anyMeasured(cells) ? measuredColumns(cells) : {}),
  };
}
