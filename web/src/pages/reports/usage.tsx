// The usage report (issue 28 item 2): tokens (input, output, total), requests (rule 3) and the
// estimated cost over a date range, grouped by user, tool, model or (system administrators) tenant,
// from GET /api/usage/report. The table sorts by any column (header buttons, aria-sort), and the CSV
// and JSON downloads are built from the rows exactly as shown (report-view.ts). Who sees what is the
// API's: managers and administrators their tenant, a plain user their own figures (said on the page).
import { useMemo, useState } from 'preact/hooks';
import { api } from '../../api/client.ts';
import { useAuth } from '../../auth/session.tsx';
import { Button, Field, formatNumber, Loaded, SelectField, useLoad } from '../../ui/index.ts';
import {
  exportName,
  GROUP_WORDS,
  type GroupBy,
  hasMeasured,
  nextSort,
  PRESETS,
  type Preset,
  presetRange,
  type ReportRow,
  reportColumns,
  reportCsv,
  reportJson,
  type Sort,
  sortRows,
  type UsageReport,
} from './report-view.ts';
import './reports.css';

/** Saves `text` as a file through a temporary object URL (no server round trip: the shown rows). */
function download(name: string, type: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

/** Money to the API's 4 decimals (token costs are often fractions of a cent), so screen and CSV agree. */
const costText = (n: number, currency: string) =>
  new Intl.NumberFormat(undefined, {
    style: 'currency',
    currency,
    minimumFractionDigits: 2,
    maximumFractionDigits: 4,
  }).format(n);

function cellOf(row: ReportRow, key: Sort['key'], currency: string) {
  if (key === 'label') return row.label;
  if (key === 'cost') return costText(row.cost, currency);
  const v = row[key];
  return v == null ? '—' : formatNumber(v);
}

export default function UsageReportPage() {
  const { user } = useAuth();
  const [preset, setPreset] = useState<Preset>('last7');
  const [range, setRange] = useState(() => presetRange('last7', new Date()));
  const [groupBy, setGroupBy] = useState<GroupBy>('user');
  const [sort, setSort] = useState<Sort>({ key: 'tokens', dir: 'descending' });
  const report = useLoad(
    (signal) =>
      api.get<UsageReport>('/api/usage/report', {
        query: { start_date: range.start, end_date: range.end, group_by: groupBy },
        signal,
      }),
    [range.start, range.end, groupBy],
  );
  const data = report.data;
  const rows = useMemo(() => (data ? sortRows(data.rows, sort) : []), [data, sort]);
  const groups = (Object.keys(GROUP_WORDS) as GroupBy[])
    .filter((g) => g !== 'tenant' || user?.is_admin)
    .map((g) => ({ value: g, label: GROUP_WORDS[g] }));

  const choosePreset = (v: string) => {
    setPreset(v as Preset);
    if (v !== 'custom') setRange(presetRange(v as Exclude<Preset, 'custom'>, new Date()));
  };
  const setDay = (which: 'start' | 'end') => (v: string) => {
    setPreset('custom');
    if (/^\d{4}-\d{2}-\d{2}$/.test(v)) setRange((r) => ({ ...r, [which]: v }));
  };
  const columns = data ? reportColumns(data.group_by, data.cost_currency, hasMeasured(data)) : [];

  return (
    <section class="usage-report" data-ready={data ? 'true' : 'false'}>
      <h1>Usage report</h1>
      <form class="report-controls" onSubmit={(e) => e.preventDefault()}>
        <SelectField label="Period" value={preset} options={PRESETS} onValue={choosePreset} />
        <Field label="Start date" type="date" value={range.start} onValue={setDay('start')} max={range.end} />
        <Field label="End date" type="date" value={range.end} onValue={setDay('end')} min={range.start} />
        <SelectField
          label="Group by"
          value={groupBy}
          options={groups}
          onValue={(v) => setGroupBy(v as GroupBy)}
        />
      </form>
      <Loaded of={report}>
        {data && (
          <>
            <p class="muted">
              {data.own_figures_only ? 'Your own usage' : 'Usage you may see'}, {data.period.start_date} to{' '}
              {data.period.end_date} (UTC days). Requests are assistant responses; costs are estimates at list
              prices, not invoices.
            </p>
            <div class="report-exports">
              <Button onClick={() => download(exportName(data, 'csv'), 'text/csv', reportCsv(data, rows))}>
                Download CSV
              </Button>
              <Button
                onClick={() =>
                  download(exportName(data, 'json'), 'application/json', reportJson(data, rows, sort))
                }
              >
                Download JSON
              </Button>
            </div>
            <div class="table-wrap">
              <table>
                <caption>
                  Usage by {GROUP_WORDS[data.group_by].toLowerCase()}, {data.period.start_date} to{' '}
                  {data.period.end_date}
                </caption>
                <thead>
                  <tr>
                    {columns.map((c) => (
                      <th
                        key={c.key}
                        scope="col"
                        class={c.key === 'label' ? undefined : 'num'}
                        aria-sort={sort.key === c.key ? sort.dir : 'none'}
                      >
                        <button
                          type="button"
                          class="sort-button"
                          onClick={() => setSort(nextSort(sort, c.key))}
                        >
                          {c.header}
                          <span aria-hidden="true">
                            {sort.key === c.key ? (sort.dir === 'ascending' ? ' ▲' : ' ▼') : ''}
                          </span>
                        </button>
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {rows.length === 0 ? (
                    <tr>
                      <td colSpan={columns.length} class="empty">
                        No usage in this period.
                      </td>
                    </tr>
                  ) : (
                    rows.map((row) => (
                      <tr key={`${row.key}`}>
                        {columns.map((c) =>
                          c.key === 'label' ? (
                            <th key={c.key} scope="row">
                              {row.label}
                            </th>
                          ) : (
                            <td key={c.key} class="num">
                              {cellOf(row, c.key, data.cost_currency)}
                            </td>
                          ),
                        )}
                      </tr>
                    ))
                  )}
                </tbody>
                <tfoot>
                  <tr>
                    <th scope="row">Total</th>
                    {columns.slice(1).map((c) => (
                      <td key={c.key} class="num">
                        {cellOf({ key: null, label: 'Total', ...data.totals }, c.key, data.cost_currency)}
                      </td>
                    ))}
                  </tr>
                </tfoot>
              </table>
            </div>
          </>
        )}
      </Loaded>
    </section>
  );
}
