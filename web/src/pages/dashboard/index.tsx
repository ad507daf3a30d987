// The dashboard (issue 14 item 2): all-time totals (GET /api/summary), tokens and requests over the
// chosen days (GET /api/range: chart + per-day table), by tool for the range, by user for
// administrators (GET /api/analysis/user-ranking, last 30 days) and the caller's quota
// (GET /api/quota/status, daily and monthly) as progress bars. Every figure is the API's number,
// formatted with thousands separators. Each part carries data-ready="false" until its data is shown
// ("true" then): bench/web-dashboard times the first load by it. A new install without any usage
// shows what to do next instead of the zero totals (first-run.tsx).
import { useMemo, useState } from 'preact/hooks';
import { api } from '../../api/client.ts';
import { useAuth } from '../../auth/session.tsx';
import { codeWords, ErrorBox, formatNumber, Loading, ProgressBar, Table } from '../../ui/index.ts';
import { SelectField } from '../../ui/select-field.tsx';
import { useLoad } from '../../ui/use-load.ts';
import './dashboard.css';
import { chartSeries, type DayFigures, lastDays, type QuotaStatus, quotaBars } from './figures.ts';
import { FirstRun } from './first-run.tsx';
import { isFirstRun } from './first-run-steps.ts';
import { RangeCost } from './range-cost.tsx';
import { UsageChart } from './usage-chart.tsx';

interface Summary {
  total_tokens: number;
  total_input_tokens: number;
  total_output_tokens: number;
  total_requests: number;
}
interface ToolFigures {
  tool_name: string;
  tokens: number;
  input_tokens: number;
  output_tokens: number;
  requests: number;
}
interface Range extends Summary {
  start: string;
  end: string;
  tools: ToolFigures[];
  daily: (DayFigures & { input_tokens: number; output_tokens: number })[];
}
interface Ranking {
  start: string;
  end: string;
  ranking: { rank: number; user_id: number; username: string; tokens: number; requests: number }[];
}

/** Roles that administer usage (the by-user table is for them; the API decides anyway). */
const ADMIN_ROLES = new Set(['platform_admin', 'tenant_admin', 'admin']);

const RANGES = [
  { value: '7', label: 'Last 7 days' },
  { value: '30', label: 'Last 30 days' },
  { value: '90', label: 'Last 90 days' },
];

function Figure({ label, value, id }: { label: string; value: number; id: string }) {
  return (
    <div class="figure">
      <dt class="figure-label">{label}</dt>
      <dd class="figure-value" data-figure={id}>
        {formatNumber(value)}
      </dd>
    </div>
  );
}

function QuotaSection() {
  const q = useLoad(
    (signal) =>
      Promise.all(
        (['daily', 'monthly'] as const).map((period) =>
          api.get<QuotaStatus>('/api/quota/status', { query: { period }, signal }),
        ),
      ),
    [],
  );
  const bars = q.data?.flatMap(quotaBars) ?? [];
  return (
    <section aria-labelledby="quota-h" data-ready={q.data ? 'true' : 'false'}>
      <h2 id="quota-h">Quota</h2>
      <ErrorBox error={q.error} />
      {q.loading && !q.data ? (
        <Loading />
      ) : q.data && bars.length === 0 ? (
        <p class="muted">No quota limits apply to you.</p>
      ) : (
        <div class="quota-bars">
          {q.data && !q.data.every((s) => s.within_quota) && (
            <p class="notice">
              Quota exceeded: {[...new Set(q.data.flatMap((s) => s.exceeded))].map(codeWords).join(', ')}
            </p>
          )}
          {bars.map((b) => (
            <div key={b.key} class="quota-bar">
              <ProgressBar label={b.label} value={b.used} max={b.limit} />
              <div class="muted quota-figures">
                {formatNumber(b.used)} of {formatNumber(b.limit)}
              </div>
            </div>
          ))}
        </div>
      )}
    </section>
  );
}

function UsersSection() {
  const r = useLoad(
    (signal) => api.get<Ranking>('/api/analysis/user-ranking', { query: { limit: 20 }, signal }),
    [],
  );
  return (
    <section aria-labelledby="users-h" data-ready={r.data ? 'true' : 'false'}>
      <h2 id="users-h">By user</h2>
      <ErrorBox error={r.error} />
      {r.loading && !r.data ? (
        <Loading />
      ) : r.data ? (
        <Table
          caption={`Top users, ${r.data.start} to ${r.data.end}`}
          rowKey={(u) => u.user_id}
          rows={r.data.ranking}
          empty="No usage by any user in the last 30 days."
          columns={[
            { key: 'rank', header: '#', numeric: true },
            { key: 'username', header: 'User' },
            { key: 'tokens', header: 'Tokens', numeric: true, render: (u) => formatNumber(u.tokens) },
            { key: 'requests', header: 'Requests', numeric: true, render: (u) => formatNumber(u.requests) },
          ]}
        />
      ) : null}
    </section>
  );
}

export default function Dashboard() {
  const { user } = useAuth();
  const [days, setDays] = useState('7');
  const summary = useLoad((signal) => api.get<Summary>('/api/summary', { signal }), []);
  const range = useLoad(
    (signal) => api.get<Range>('/api/range', { query: lastDays(Number(days), new Date()), signal }),
    [days],
  );
  const series = useMemo(() => (range.data ? chartSeries(range.data.daily) : null), [range.data]);
  const isAdmin = !!user && (user.is_admin || ADMIN_ROLES.has(user.role));

  return (
    <section class="dashboard" data-ready={summary.data ? 'true' : 'false'}>
      <h1>Dashboard</h1>
      <ErrorBox error={summary.error} />
      {summary.data && isFirstRun(summary.data) ? (
        <FirstRun />
      ) : summary.data ? (
        <dl class="figures" title="All-time totals">
          <Figure id="total-tokens" label="Total tokens" value={summary.data.total_tokens} />
          <Figure id="total-requests" label="Total requests" value={summary.data.total_requests} />
          <Figure id="input-tokens" label="Input tokens" value={summary.data.total_input_tokens} />
          <Figure id="output-tokens" label="Output tokens" value={summary.data.total_output_tokens} />
        </dl>
      ) : (
        summary.loading && <Loading />
      )}

      <section aria-labelledby="over-time-h" data-ready={range.data && series ? 'true' : 'false'}>
        <div class="section-head">
          <h2 id="over-time-h">Tokens and requests over time</h2>
          <SelectField label="Period" value={days} options={RANGES} onValue={setDays} />
        </div>
        <ErrorBox error={range.error} />
        {range.loading && !range.data && <Loading />}
        {range.data && series && (
          <>
            <p class="muted">
              {range.data.start} to {range.data.end}: {formatNumber(range.data.total_tokens)} tokens,{' '}
              {formatNumber(range.data.total_requests)} requests.
            </p>
            <RangeCost start={range.data.start} end={range.data.end} />
            <UsageChart data={series} />
            <details>
              <summary>Figures per day</summary>
              <Table
                caption="Tokens and requests per day"
                rowKey={(d) => d.date}
                rows={[...range.data.daily].reverse()}
                columns={[
                  { key: 'date', header: 'Day' },
                  { key: 'tokens', header: 'Tokens', numeric: true, render: (d) => formatNumber(d.tokens) },
                  {
                    key: 'requests',
                    header: 'Requests',
                    numeric: true,
                    render: (d) => formatNumber(d.requests),
                  },
                ]}
              />
            </details>
            <h2>By tool</h2>
            <Table
              caption={`By tool, ${range.data.start} to ${range.data.end}`}
              rowKey={(t) => t.tool_name}
              rows={range.data.tools}
              empty="No usage in this period."
              columns={[
                { key: 'tool_name', header: 'Tool' },
                { key: 'tokens', header: 'Tokens', numeric: true, render: (t) => formatNumber(t.tokens) },
                {
                  key: 'input_tokens',
                  header: 'Input',
                  numeric: true,
                  render: (t) => formatNumber(t.input_tokens),
                },
                {
                  key: 'output_tokens',
                  header: 'Output',
                  numeric: true,
                  render: (t) => formatNumber(t.output_tokens),
                },
                {
                  key: 'requests',
                  header: 'Requests',
                  numeric: true,
                  render: (t) => formatNumber(t.requests),
                },
              ]}
            />
          </>
        )}
      </section>

      {isAdmin && <UsersSection />}
      <QuotaSection />
    </section>
  );
}
