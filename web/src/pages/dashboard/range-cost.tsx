// The estimated cost of the dashboard's period (issue 28 item 2: cost next to tokens), from GET /api/roi
// over the same days: the ROI module's prices, the same figures as the usage report (/reports/usage).
// A plain user's ROI figures are their own, so the line names the tokens it prices rather than
// borrowing the tenant's total above it. Callers without view_analysis (readonly) get no line.
// Below it, when the CLIs sent OpenTelemetry metrics for the period (issue 29 item 2), what they
// measured (lines, commits, pull requests, tool accept rate, active time) and where the hours saved
// come from (measured active time or the per-request assumption).
import { api } from '../../api/client.ts';
import { mayViewReports } from '../../auth/access.ts';
import { useAuth } from '../../auth/session.tsx';
import { formatMoney, formatNumber, useLoad } from '../../ui/index.ts';

interface Roi {
  own_figures_only: boolean;
  cost_currency: string;
  totals: {
    tokens: number;
    cost: number;
    hours_saved: number;
    hours_saved_source: 'measured' | 'assumed' | 'mixed';
  };
  /** The CLIs' measured figures (OpenTelemetry, issue 29 item 2); null when none were received. */
  productivity: {
    lines_added: number;
    lines_removed: number;
    commits: number;
    pull_requests: number;
    edits_accepted: number;
    edits_rejected: number;
    edit_accept_rate: number | null;
    active_hours: number;
  } | null;
}

const HOURS_SOURCE = {
  measured: 'measured active time',
  assumed: 'assumed per request',
  mixed: 'measured active time where the CLIs report it, assumed per request elsewhere',
} as const;

/** The measured figures of the period, only those present (a CLI that exports none shows nothing). */
function Productivity({ p, roi }: { p: NonNullable<Roi['productivity']>; roi: Roi }) {
  const items: [string, string, string][] = [];
  if (p.lines_added || p.lines_removed)
    items.push([
      'lines',
      'Lines of code',
      `+${formatNumber(p.lines_added)} / −${formatNumber(p.lines_removed)}`,
    ]);
  if (p.commits) items.push(['commits', 'Commits', formatNumber(p.commits)]);
  if (p.pull_requests) items.push(['pull-requests', 'Pull requests', formatNumber(p.pull_requests)]);
  if (p.edit_accept_rate !== null)
    items.push([
      'accept-rate',
      'Tool accept rate',
      `${p.edit_accept_rate}% (${formatNumber(p.edits_accepted)} of ${formatNumber(p.edits_accepted + p.edits_rejected)})`,
    ]);
  if (p.active_hours) items.push(['active-hours', 'Active time', `${p.active_hours} h`]);
  if (items.length === 0) return null;
  return (
    <section class="range-productivity" aria-label="Measured by the CLIs">
      <h3>Measured by the CLIs{roi.own_figures_only ? ' (your own)' : ''}</h3>
      <dl>
        {items.map(([key, label, value]) => (
          <div key={key}>
            <dt>{label}</dt>
            <dd data-figure={`otel-${key}`}>{value}</dd>
          </div>
        ))}
      </dl>
      <p class="muted">
        Hours saved: <span data-figure="hours-saved">{roi.totals.hours_saved}</span> (
        <span data-figure="hours-saved-source">{HOURS_SOURCE[roi.totals.hours_saved_source]}</span>).
      </p>
    </section>
  );
}

export function RangeCost({ start, end }: { start: string; end: string }) {
  const { viewer } = useAuth();
  if (!viewer || !mayViewReports(viewer)) return null;
  return <Cost start={start} end={end} />;
}

function Cost({ start, end }: { start: string; end: string }) {
  const roi = useLoad(
    (signal) => api.get<Roi>('/api/roi', { query: { start_date: start, end_date: end }, signal }),
    [start, end],
  );
  if (!roi.data || roi.error) return null;
  const { totals, own_figures_only, cost_currency, productivity } = roi.data;
  return (
    <>
      <p class="muted range-cost">
        Estimated cost:{' '}
        <strong data-figure="range-cost">{formatMoney(totals.cost, { currency: cost_currency })}</strong> for{' '}
        {formatNumber(totals.tokens)} tokens{own_figures_only ? ' of your own' : ''} (list prices, an
        estimate; <a href="/reports/usage">usage report</a>).
      </p>
      {productivity && <Productivity p={productivity} roi={roi.data} />}
    </>
  );
}
