// The productivity points in an OTLP metrics export (issue 29 item 2), and how one point changes the
// daily figures. Metrics read (each CLI's docs; a metric a CLI does not export is simply absent):
//
//   Claude Code  claude_code.lines_of_code.count {type: added|removed}, claude_code.commit.count,
//                claude_code.pull_request.count, claude_code.code_edit_tool.decision
//                {decision: accept|reject}, claude_code.active_time.total (seconds)
//   Gemini CLI   gemini_cli.lines.changed {type: added|removed}, gemini_cli.tool.call.count
//                {decision: accept|reject} (tool calls the user was asked to approve)
//   Qwen Code    qwen-code.lines.changed, qwen-code.tool.call.count (the same, Gemini CLI's fork)
//   Codex        exports no such metric
//
// Counters arrive as OTLP Sums, DELTA (Claude Code's default) or CUMULATIVE (the OpenTelemetry SDK
// default): see pointIncrement.
import { type Attrs, attrsOf, identityOf, nanosToDate, type OtelTool, str, toolOf } from './attributes.ts';

export const PRODUCTIVITY_FIGURES = [
  'linesAdded',
  'linesRemoved',
  'commits',
  'pullRequests',
  'editsAccepted',
  'editsRejected',
  'activeMs',
] as const;
export type ProductivityFigure = (typeof PRODUCTIVITY_FIGURES)[number];
export type ProductivityFigures = Record<ProductivityFigure, number>;

export const AGGREGATION_DELTA = 1;
export const AGGREGATION_CUMULATIVE = 2;

export interface ProductivityPoint {
  tool: OtelTool;
  figure: ProductivityFigure;
  /** The series (metric, resource, point attributes), hashed. */
  seriesKey: string;
  cumulative: boolean;
  startTimeNanos: string;
  timeNanos: string;
  at: Date;
  /** The point's value in thousandths (active time is fractional seconds). */
  valueMilli: number;
}

const added = (a: Attrs): ProductivityFigure | undefined =>
  a.type === 'added' ? 'linesAdded' : a.type === 'removed' ? 'linesRemoved' : undefined;
const decided = (a: Attrs): ProductivityFigure | undefined =>
  a.decision === 'accept' ? 'editsAccepted' : a.decision === 'reject' ? 'editsRejected' : undefined;

/** The figure a metric point adds to, from its metric's name (prefix stripped) and attributes. */
const FIGURE_OF: Record<string, (a: Attrs) => ProductivityFigure | undefined> = {
  'lines_of_code.count': added,
  'lines.changed': added,
  'commit.count': () => 'commits',
  'pull_request.count': () => 'pullRequests',
  'code_edit_tool.decision': decided,
  'tool.call.count': decided,
  'active_time.total': () => 'activeMs',
};

interface NumberPoint {
  attributes?: unknown;
  startTimeUnixNano?: string;
  timeUnixNano?: string;
  asInt?: string;
  asDouble?: number;
}

/** The productivity points of a decoded ExportMetricsServiceRequest. Gauges and histograms are skipped. */
export function productivityPoints(request: Record<string, unknown>): ProductivityPoint[] {
  const out: ProductivityPoint[] = [];
  for (const rm of (request.resourceMetrics as Array<Record<string, unknown>>) ?? []) {
    const resource = attrsOf((rm.resource as { attributes?: unknown } | undefined)?.attributes);
    for (const sm of (rm.scopeMetrics as Array<{ metrics?: Array<Record<string, unknown>> }>) ?? []) {
      for (const metric of sm.metrics ?? []) {
        const name = typeof metric.name === 'string' ? metric.name : '';
        const tool = toolOf(name);
        const sum = metric.sum as { dataPoints?: NumberPoint[]; aggregationTemporality?: number } | undefined;
        const figureOf = tool && FIGURE_OF[name.slice(name.indexOf('.') + 1)];
        if (!tool || !sum || !figureOf) continue;
        const temporality = sum.aggregationTemporality;
        if (temporality !== AGGREGATION_DELTA && temporality !== AGGREGATION_CUMULATIVE) continue;
        for (const p of sum.dataPoints ?? []) {
          const a = attrsOf(p.attributes);
          const figure = figureOf(a);
          const at = nanosToDate(p.timeUnixNano);
          const value = p.asDouble ?? (p.asInt !== undefined ? Number(p.asInt) : Number.NaN);
          if (!figure || !at || !Number.isFinite(value) || value < 0) continue;
          out.push({
            tool,
            figure,
            seriesKey: identityOf(name, resource, a, str(resource, 'service.instance.id') ?? ''),
            cumulative: temporality === AGGREGATION_CUMULATIVE,
            startTimeNanos: String(p.startTimeUnixNano ?? '0'),
            timeNanos: String(p.timeUnixNano),
            at,
            valueMilli: Math.round(value * 1000),
          });
        }
      }
    }
  }
  return out;
}

export interface SeriesState {
  startTimeNanos: string;
  timeNanos: string;
  valueMilli: number;
}

/**
 * What a point adds, given the series' last point taken (undefined for a new series); null when it
 * adds nothing and is not taken (a retried or older point).
 * - DELTA: the point's value, once: a point not later than the last one taken is a retry.
 * - CUMULATIVE: the growth since the last point of the same start; a new start time, or a value that
 *   went down, is a restarted process whose count began again at zero, so the whole value is new.
 *   A series' first point adds its whole value (the count since its start, which we had not seen).
 */
export function pointIncrement(point: ProductivityPoint, last: SeriesState | undefined): number | null {
  if (last && BigInt(point.timeNanos) <= BigInt(last.timeNanos)) return null;
  if (!point.cumulative || !last) return point.valueMilli;
  if (point.startTimeNanos !== last.startTimeNanos || point.valueMilli < last.valueMilli)
    return point.valueMilli;
  return point.valueMilli - last.valueMilli;
}

export const emptyFigures = (): ProductivityFigures => ({
  linesAdded: 0,
  linesRemoved: 0,
  commits: 0,
  pullRequests: 0,
  editsAccepted: 0,
  editsRejected: 0,
  activeMs: 0,
});
