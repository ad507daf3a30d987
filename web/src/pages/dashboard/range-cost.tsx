// The estimated cost of the dashboard's period (issue 28 item 2: cost next to tokens), from GET /api/roi
// over the same days: the ROI module's prices, the same figures as the usage report (/reports/usage).
// A plain user's ROI figures are their own, so the line names the tokens it prices rather than
// borrowing the tenant's total above it. Callers without view_analysis (readonly) get no line.
import { api } from '../../api/client.ts';
import { mayViewReports } from '../../auth/access.ts';
import { useAuth } from '../../auth/session.tsx';
import { formatMoney, formatNumber, useLoad } from '../../ui/index.ts';

interface Roi {
  own_figures_only: boolean;
  cost_currency: string;
  totals: { tokens: number; cost: number };
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
  const { totals, own_figures_only, cost_currency } = roi.data;
  return (
    <p class="muted range-cost">
      Estimated cost:{' '}
      <strong data-figure="range-cost">{formatMoney(totals.cost, { currency: cost_currency })}</strong> for{' '}
      {formatNumber(totals.tokens)} tokens{own_figures_only ? ' of your own' : ''} (list prices, an estimate;{' '}
      <a href="/reports/usage">usage report</a>).
    </p>
  );
}
