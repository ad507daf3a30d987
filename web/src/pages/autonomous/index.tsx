// The autonomous workflow list (GET /api/autonomous/workflows): the caller's own workflows, or the
// whole scope's for an administrator, filtered by status and batch, paged 50 at a time, newest first
// as the API orders them. Each row links to its detail page; "New workflow" to the creation form.

import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api } from '../../api/client.ts';
import { Button, ErrorBox, Field, formatNumber, formatTime, Loading, Table } from '../../ui/index.ts';
import { SelectField } from '../../ui/select-field.tsx';
import { requirementOf, WORKFLOW_STATUSES, type Workflow } from './model.ts';
import { StatusBadge } from './parts.tsx';

const PAGE = 50;

export default function AutonomousList() {
  const { query, route } = useLocation();
  const [status, setStatus] = useState(query.status ?? '');
  const [batch, setBatch] = useState(query.batch_id ?? '');
  const [offset, setOffset] = useState(0);
  const [data, setData] = useState<{ workflows: Workflow[]; total: number } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [applied, setApplied] = useState({ status: query.status ?? '', batch: query.batch_id ?? '' });

  useEffect(() => {
    const ctl = new AbortController();
    setError(null);
    api
      .get<{ workflows: Workflow[]; total: number }>('/api/autonomous/workflows', {
        query: { status: applied.status, batch_id: applied.batch, limit: PAGE, offset },
        signal: ctl.signal,
      })
      .then(setData)
      .catch((e) => {
        if ((e as Error).name !== 'AbortError') setError(e);
      });
    return () => ctl.abort();
  }, [applied, offset]);

  const apply = (e: Event) => {
    e.preventDefault();
    setOffset(0);
    setApplied({ status, batch: batch.trim() });
  };

  return (
    <section>
      <div class="aw-head">
        <h1>Autonomous development</h1>
        <a class="btn btn-primary" href="/autonomous/new">
          New workflow
        </a>
      </div>
      <form class="aw-filters" onSubmit={apply} aria-label="Filter workflows">
        <SelectField
          label="Status"
          value={status}
          onValue={setStatus}
          options={[
            { value: '', label: 'Any status' },
            ...WORKFLOW_STATUSES.map((s) => ({ value: s, label: s.replace(/_/g, ' ') })),
          ]}
        />
        <Field label="Batch id" value={batch} onValue={setBatch} placeholder="ab-…" />
        <Button type="submit">Apply filters</Button>
      </form>
      <ErrorBox error={error} />
      {!data && !error && <Loading />}
      {data && (
        <>
          <Table<Workflow>
            caption={`Workflows (${formatNumber(data.total)})`}
            rows={data.workflows}
            rowKey={(w) => w.id}
            empty={
              applied.status || applied.batch ? (
                'No workflow matches these filters.'
              ) : (
                <>
                  No workflows yet. <a href="/autonomous/new">Create the first one</a>.
                </>
              )
            }
            columns={[
              {
                key: 'title',
                header: 'Workflow',
                render: (w) => (
                  <a href={`/autonomous/${w.id}`} title={w.id}>
                    {w.title || requirementOf(w) || w.id}
                  </a>
                ),
              },
              {
                key: 'status',
                header: 'Status',
                render: (w) => <StatusBadge status={w.status} pausedBy={w.paused_by} />,
              },
              { key: 'current_phase', header: 'Phase', render: (w) => w.current_phase.replace(/_/g, ' ') },
              { key: 'project_path', header: 'Project', render: (w) => w.project_path ?? '—' },
              {
                key: 'batch',
                header: 'Batch',
                render: (w) =>
                  w.batch_id ? (
                    <a
                      href={`/autonomous?batch_id=${encodeURIComponent(w.batch_id)}`}
                      onClick={(e) => {
                        e.preventDefault();
                        setBatch(w.batch_id!);
                        setOffset(0);
                        setApplied({ status: applied.status, batch: w.batch_id! });
                        route(`/autonomous?batch_id=${encodeURIComponent(w.batch_id!)}`, true);
                      }}
                    >
                      item {(w.batch_position ?? 0) + 1}
                    </a>
                  ) : (
                    '—'
                  ),
              },
              {
                key: 'total_tokens',
                header: 'Tokens',
                numeric: true,
                render: (w) => formatNumber(w.total_tokens),
              },
              { key: 'created_at', header: 'Created', render: (w) => formatTime(w.created_at) },
            ]}
          />
          {data.total > PAGE && (
            <nav class="aw-controls" aria-label="Pages">
              <Button disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
                Previous page
              </Button>
              <span class="muted">
                {formatNumber(offset + 1)}–{formatNumber(Math.min(offset + PAGE, data.total))} of{' '}
                {formatNumber(data.total)}
              </span>
              <Button disabled={offset + PAGE >= data.total} onClick={() => setOffset(offset + PAGE)}>
                Next page
              </Button>
            </nav>
          )}
        </>
      )}
    </section>
  );
}
