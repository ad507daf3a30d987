// /manage/audit: the audit log (GET /api/audit/logs) with filters (user name, action, resource type,
// severity, date range), pages of 50, and the export (GET /api/audit/logs/export, CSV or JSON) as
// plain download links carrying the date range (the export takes no other filter). Non system
// administrators see their own tenant's records (the API's scope).
import { useState } from 'preact/hooks';
import { api } from '../../api/client.ts';
import { mayExportAudit } from '../../auth/access.ts';
import { useAuth } from '../../auth/session.tsx';
import { Button, ErrorBox, Field, formatNumber, formatTime, Table } from '../../ui/index.ts';
import { Loaded } from '../../ui/loaded.tsx';
import { SelectField } from '../../ui/select-field.tsx';
import {
  AUDIT_PAGE_SIZE,
  type AuditFilters,
  auditExportHref,
  auditFilterProblem,
  auditQuery,
  detailsSummary,
  EMPTY_AUDIT_FILTERS,
  pageBounds,
} from './audit-filters.ts';
import { ManagePage } from './layout.tsx';
import type { AuditRecord } from './types.ts';
import { useResource } from './use-resource.ts';

interface Page {
  logs: AuditRecord[];
  total: number;
}

export default function AuditPage() {
  // The export links need export_audit_logs (managers hold it; the API checks it again).
  const { viewer } = useAuth();
  const exports = !!viewer && mayExportAudit(viewer);
  const [draft, setDraft] = useState<AuditFilters>(EMPTY_AUDIT_FILTERS);
  const [applied, setApplied] = useState<AuditFilters>(EMPTY_AUDIT_FILTERS);
  const [page, setPage] = useState(0);
  const [problem, setProblem] = useState<string | null>(null);
  const logs = useResource(
    (signal) => api.get<Page>('/api/audit/logs', { signal, query: auditQuery(applied, page) }),
    [applied, page],
  );
  const set = (k: keyof AuditFilters) => (v: string) => setDraft({ ...draft, [k]: v });
  const apply = (e: Event) => {
    e.preventDefault();
    const p = auditFilterProblem(draft);
    setProblem(p);
    if (p) return;
    setPage(0);
    setApplied({ ...draft });
  };
  const clear = () => {
    setDraft(EMPTY_AUDIT_FILTERS);
    setApplied(EMPTY_AUDIT_FILTERS);
    setPage(0);
    setProblem(null);
  };
  const total = logs.data?.total ?? 0;
  const b = pageBounds(page, total);

  return (
    <ManagePage title="Audit log">
      <form class="panel" onSubmit={apply} aria-labelledby="audit-filter-h">
        <h2 id="audit-filter-h">Filters</h2>
        <ErrorBox error={problem} />
        <div class="form-grid">
          <Field label="User name" value={draft.username} onValue={set('username')} />
          <Field label="Action" value={draft.action} onValue={set('action')} hint="Exact, e.g. USER_CREATE" />
          <Field
            label="Resource type"
            value={draft.resource_type}
            onValue={set('resource_type')}
            hint="e.g. user, tenant"
          />
          <SelectField
            label="Severity"
            value={draft.severity}
            onValue={set('severity')}
            options={[
              { value: '', label: 'Any' },
              { value: 'info', label: 'info' },
              { value: 'warning', label: 'warning' },
              { value: 'critical', label: 'critical' },
            ]}
          />
          <Field label="From" type="date" value={draft.start_date} onValue={set('start_date')} />
          <Field label="To" type="date" value={draft.end_date} onValue={set('end_date')} />
        </div>
        <div class="form-actions">
          <Button type="submit" variant="primary">
            Apply filters
          </Button>
          <Button variant="link" onClick={clear}>
            Clear
          </Button>
          {exports && (
            <>
              <span class="muted">Export (date range only):</span>
              <a class="btn" href={auditExportHref(applied, 'csv')} download>
                Export CSV
              </a>
              <a class="btn" href={auditExportHref(applied, 'json')} download>
                Export JSON
              </a>
            </>
          )}
        </div>
      </form>
      <Loaded of={logs}>
        <Table
          caption={
            total
              ? `Records ${formatNumber(b.from)}–${formatNumber(b.to)} of ${formatNumber(total)}`
              : 'Records'
          }
          rowKey={(a) => a.id}
          rows={logs.data?.logs ?? []}
          empty="No audit record matches these filters."
          columns={[
            { key: 'time', header: 'Time', render: (a) => formatTime(a.timestamp) },
            { key: 'username', header: 'User', render: (a) => a.username ?? '—' },
            { key: 'action', header: 'Action', render: (a) => <code>{a.action}</code> },
            {
              key: 'severity',
              header: 'Severity',
              render: (a) => (
                <span class={`badge ${a.severity === 'info' ? '' : 'badge-bad'}`}>{a.severity}</span>
              ),
            },
            {
              key: 'resource',
              header: 'Resource',
              render: (a) =>
                a.resource_type ? `${a.resource_type}${a.resource_id ? ` ${a.resource_id}` : ''}` : '—',
            },
            { key: 'result', header: 'Result', render: (a) => (a.success ? 'ok' : 'refused / failed') },
            {
              key: 'details',
              header: 'Details',
              render: (a) => (
                <span class="cell-wrap" title={a.details == null ? undefined : JSON.stringify(a.details)}>
                  {detailsSummary(a.details)}
                </span>
              ),
            },
          ]}
        />
        <div class="form-actions">
          <Button disabled={page === 0 || logs.loading} onClick={() => setPage(page - 1)}>
            Previous page
          </Button>
          <span>
            Page {formatNumber(page + 1)} of {formatNumber(b.pages)}
          </span>
          <Button
            disabled={(page + 1) * AUDIT_PAGE_SIZE >= total || logs.loading}
            onClick={() => setPage(page + 1)}
          >
            Next page
          </Button>
        </div>
      </Loaded>
    </ManagePage>
  );
}
