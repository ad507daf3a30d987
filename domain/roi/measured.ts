// Measured figures beside the priced usage (issue 29 item 2): the CLIs' productivity metrics
// (otel_productivity_daily: lines, commits, pull requests, edit decisions, active time) joined to the
// ROI module's cells by day, CLI and user, so the usage report and ROI group and scope them exactly as
// they do tokens. Each (day, CLI, user) figure rides on ONE cell (the first of that key; a key without
// usage gets a cell of its own with no tokens), so a sum over any grouping counts it once; the cells
// of a key with measured active time are `measured`: their requests do not add assumed hours.
import { emptyFigures, PRODUCTIVITY_FIGURES, type ProductivityFigures } from '../otlp/productivity.ts';
import type { PricedCell } from './figures.ts';

export interface ProductivityCell {
  date: string;
  toolName: string;
  userId: number;
  tenantId: number;
  username: string | null;
  figures: ProductivityFigures;
}

const keyOf = (c: { date: string; toolName: string; userId: number | null }) =>
  `${c.date}\u0000${c.toolName}\u0000${c.userId ?? ''}`;

export function attachProductivity(
  priced: readonly PricedCell[],
  cells: readonly ProductivityCell[],
): PricedCell[] {
  if (cells.length === 0) return [...priced];
  const byKey = new Map(cells.map((c) => [keyOf(c), c]));
  const taken = new Set<string>();
  const out = priced.map((c): PricedCell => {
    const k = keyOf(c);
    const m = byKey.get(k);
    if (!m) return c;
    const measured = m.figures.activeMs > 0;
    if (taken.has(k)) return measured ? { ...c, measured } : c;
    taken.add(k);
    return { ...c, productivity: m.figures, measured };
  });
  for (const [k, m] of byKey) {
    if (taken.has(k)) continue;
    out.push({
      date: m.date,
      toolName: m.toolName,
      model: null,
      userId: m.userId,
      username: m.username,
      tenantId: m.tenantId,
      tokens: 0,
      inputTokens: 0,
      outputTokens: 0,
      requests: 0,
      cost: 0,
      pricedBy: 'default',
      matched: null,
      source: 'messages',
      productivity: m.figures,
      measured: m.figures.activeMs > 0,
    });
  }
  return out;
}

/** The productivity figures of `cells`, summed; null when none of them carries any. */
export function productivityOf(cells: readonly PricedCell[]): ProductivityFigures | null {
  let sum: ProductivityFigures | null = null;
  for (const c of cells) {
    if (!c.productivity) continue;
    sum ??= emptyFigures();
    for (const f of PRODUCTIVITY_FIGURES) sum[f] += c.productivity[f];
  }
  return sum;
}

/** The figures as an answer shows them (snake_case; active time in hours; accept rate in percent). */
export function productivityView(p: ProductivityFigures | null) {
  if (!p) return null;
  const decided = p.editsAccepted + p.editsRejected;
  return {
    lines_added: p.linesAdded,
    lines_removed: p.linesRemoved,
    commits: p.commits,
    pull_requests: p.pullRequests,
    edits_accepted: p.editsAccepted,
    edits_rejected: p.editsRejected,
    edit_accept_rate: decided > 0 ? Math.round((p.editsAccepted / decided) * 1000) / 10 : null,
    active_hours: Math.round((p.activeMs / 3_600_000) * 100) / 100,
  };
}
