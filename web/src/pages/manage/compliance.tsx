// /manage/compliance: the security score (GET /api/compliance/audit/security-score), report
// generation (POST /api/compliance/reports, JSON: its summary is shown and the report is saved), and
// the saved reports (GET …/reports/saved) with their summaries (GET …/reports/<id>).
import { useState } from 'preact/hooks';
import { api } from '../../api/client.ts';
import {
  Button,
  ErrorBox,
  Field,
  formatNumber,
  formatPercent,
  formatTime,
  Loading,
  Table,
} from '../../ui/index.ts';
import { Loaded } from '../../ui/loaded.tsx';
import { SelectField } from '../../ui/select-field.tsx';
import { useSubmit } from '../../ui/use-submit.ts';
import { defaultPeriod, labelOf, summaryEntries } from './compliance-view.ts';
import { tenantIdOf } from './form-values.ts';
import { ManagePage } from './layout.tsx';
import { tenantName, tenantOptions, useTenants } from './tenant-options.ts';
import { useResource } from './use-resource.ts';

interface ReportTypes {
  report_types: { type: string; name: string; description: string }[];
  max_period_days: number;
}
interface Score {
  score: number;
  window_days: number;
  components: { name: string; value: number; penalty: number; weight: number }[];
}
interface Saved {
  report_id: string;
  report_type: string;
  tenant_id: number | null;
  period_start: string;
  period_end: string;
  format: string;
  created_at: string;
  summary: Record<string, unknown> | null;
}
interface Generated extends Saved {
  rows: unknown[];
}

function Summary({ title, report }: { title: string; report: Saved & { rows?: unknown[] } }) {
  const lines = summaryEntries(report.summary);
  return (
    <section class="panel" aria-labelledby="summary-h">
      <h2 id="summary-h">{title}</h2>
      <p class="muted">
        {labelOf(report.report_type)}, {report.period_start} to {report.period_end}
        {report.rows ? `, ${formatNumber(report.rows.length)} rows` : ''}. Report id{' '}
        <code>{report.report_id}</code>.
      </p>
      {lines.length ? (
        <dl>
          {lines.map(([k, v]) => (
            <div key={k}>
              <dt>
                <strong>{k}</strong>
              </dt>
              <dd class="cell-wrap">{v}</dd>
            </div>
          ))}
        </dl>
      ) : (
        <p class="muted">The report has no summary.</p>
      )}
    </section>
  );
}

export default function CompliancePage() {
  const tenants = useTenants();
  const types = useResource((signal) => api.get<ReportTypes>('/api/compliance/reports', { signal }));
  const score = useResource((signal) => api.get<Score>('/api/compliance/audit/security-score', { signal }));
  const saved = useResource((signal) =>
    api.get<{ reports: Saved[] }>('/api/compliance/reports/saved', { signal, query: { limit: 50 } }),
  );
  const period = defaultPeriod(new Date());
  const [type, setType] = useState('');
  const [start, setStart] = useState(period.start);
  const [end, setEnd] = useState(period.end);
  const [tenant, setTenant] = useState('');
  const [shown, setShown] = useState<{ title: string; report: Saved & { rows?: unknown[] } } | null>(null);

  const chosenType = type || types.data?.report_types[0]?.type || '';
  const {
    busy,
    error,
    setError,
    submit: generate,
  } = useSubmit(async () => {
    const r = await api.post<Generated>('/api/compliance/reports', {
      report_type: chosenType,
      period_start: start,
      period_end: end,
      format: 'json',
      tenant_id: tenantIdOf(tenant) ?? undefined,
    });
    setShown({ title: 'Generated report', report: r });
    void saved.reload();
  });
  const view = async (id: string) => {
    setError(null);
    try {
      const r = await api.get<Saved>(`/api/compliance/reports/${encodeURIComponent(id)}`);
      setShown({ title: 'Saved report', report: r });
    } catch (err) {
      setError(err);
    }
  };

  return (
    <ManagePage title="Compliance">
      <section class="panel" aria-labelledby="score-h">
        <h2 id="score-h">Security score</h2>
        <ErrorBox error={score.error} />
        {score.data ? (
          <>
            <ul class="stat-list">
              <li>
                <strong>{formatNumber(score.data.score)} / 100</strong> over the last{' '}
                {formatNumber(score.data.window_days)} days
              </li>
            </ul>
            <Table
              caption="What the score is made of"
              rowKey={(c) => c.name}
              rows={score.data.components}
              columns={[
                { key: 'name', header: 'Signal', render: (c) => labelOf(c.name) },
                {
                  key: 'value',
                  header: 'Value',
                  numeric: true,
                  render: (c) => formatNumber(c.value, { digits: 4 }),
                },
                { key: 'penalty', header: 'Penalty', numeric: true, render: (c) => formatPercent(c.penalty) },
                { key: 'weight', header: 'Weight', numeric: true, render: (c) => formatPercent(c.weight) },
              ]}
            />
          </>
        ) : score.error ? null : (
          <Loading />
        )}
      </section>

      <form class="panel" onSubmit={generate} aria-labelledby="gen-h">
        <h2 id="gen-h">Generate a report</h2>
        <ErrorBox error={error} />
        <ErrorBox error={types.error} />
        <div class="form-grid">
          <SelectField
            label="Report"
            value={chosenType}
            onValue={setType}
            options={(types.data?.report_types ?? []).map((t) => ({ value: t.type, label: t.name }))}
            hint={types.data?.report_types.find((t) => t.type === chosenType)?.description}
          />
          <Field label="Period start" type="date" value={start} onValue={setStart} required />
          <Field label="Period end" type="date" value={end} onValue={setEnd} required />
          <SelectField
            label="Tenant"
            value={tenant}
            onValue={setTenant}
            options={tenantOptions(tenants.data, 'Every tenant')}
          />
        </div>
        <Button type="submit" variant="primary" busy={busy} disabled={!chosenType}>
          Generate report
        </Button>
      </form>

      {shown && <Summary title={shown.title} report={shown.report} />}

      <Loaded of={saved}>
        <Table
          caption="Saved reports"
          rowKey={(r) => r.report_id}
          rows={saved.data?.reports ?? []}
          empty="No report has been generated yet."
          columns={[
            { key: 'created', header: 'Created', render: (r) => formatTime(r.created_at) },
            { key: 'type', header: 'Report', render: (r) => labelOf(r.report_type) },
            { key: 'period', header: 'Period', render: (r) => `${r.period_start} – ${r.period_end}` },
            {
              key: 'tenant',
              header: 'Tenant',
              render: (r) => (r.tenant_id == null ? 'Every tenant' : tenantName(tenants.data, r.tenant_id)),
            },
            { key: 'format', header: 'Format' },
            {
              key: 'actions',
              header: 'Actions',
              render: (r) => (
                <Button aria-label={`View report ${r.report_id}`} onClick={() => view(r.report_id)}>
                  View
                </Button>
              ),
            },
          ]}
        />
      </Loaded>
    </ManagePage>
  );
}
