// One autonomous workflow: its facts, the controls, the milestone timeline (per-phase tokens adding up
// to total_tokens), the live activity stream, the pull request's stats and diff, and its forks.
// The stream drives refreshes: milestone_updated reloads the timeline and the workflow (its totals),
// system/status sets the status at once and reloads the workflow; refreshes are coalesced so a burst
// of events costs one request of each. Every (re)connect of the stream and a 10 s poll while the
// workflow is not over re-read both, so a dropped stream never leaves the page stale. A failed
// workflow's banner names the cause and the fix (model.ts explainFailure), not only its error code.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api } from '../../api/client.ts';
import { Button, ErrorBox, formatNumber, formatTime, Loading, Table } from '../../ui/index.ts';
import { ActivityFeed } from './activity.tsx';
import { ControlBar } from './controls.tsx';
import {
  type DiffAnswer,
  explainFailure,
  type Milestone,
  requirementOf,
  tokenBreakdown,
  type Workflow,
} from './model.ts';
import { DiffView, Facts, FileStats, StatusBadge } from './parts.tsx';
import { Timeline } from './timeline.tsx';

/** How often the page re-reads an unfinished workflow besides the live stream. */
const POLL_MS = 10_000;

interface PrStats extends Omit<DiffAnswer, 'diff' | 'truncated'> {
  pr_number: number;
  pr_url: string | null;
  status: string;
  head_branch: string;
  base_branch: string;
  changed_files: number;
}

function PullRequest({ workflow }: { workflow: Workflow }) {
  const [stats, setStats] = useState<PrStats | null>(null);
  const [diff, setDiff] = useState<DiffAnswer | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const base = `/api/autonomous/workflows/${encodeURIComponent(workflow.id)}`;
  const has = workflow.pr_number != null;
  useEffect(() => {
    if (!has) return;
    api
      .get<PrStats>(`${base}/pr-stats`)
      .then((s) => {
        setStats(s);
        setError(null);
      })
      .catch(setError);
  }, [base, has, workflow.status]);
  if (!has) return <p class="muted">The workflow has no pull request yet.</p>;
  const loadDiff = async () => {
    setBusy(true);
    try {
      setDiff(await api.get<DiffAnswer>(`${base}/pr-diff`));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div>
      <ErrorBox error={error} />
      {!stats && !error && <Loading />}
      {stats && (
        <>
          <p>
            Pull request #{stats.pr_number} ({stats.status}): <code>{stats.head_branch}</code> into{' '}
            <code>{stats.base_branch}</code>, <span class="aw-add">+{formatNumber(stats.additions)}</span>{' '}
            <span class="aw-del">−{formatNumber(stats.deletions)}</span> in{' '}
            {formatNumber(stats.changed_files)} file{stats.changed_files === 1 ? '' : 's'}.
          </p>
          <FileStats files={stats.files} caption="Files changed by the pull request" />
        </>
      )}
      {!diff ? (
        <Button onClick={loadDiff} busy={busy}>
          Show the pull request diff
        </Button>
      ) : (
        <>
          {diff.truncated && (
            <p class="notice">The diff is cut at the server's limit; the stats are complete.</p>
          )}
          <DiffView diff={diff.diff} label="Pull request diff" />
        </>
      )}
    </div>
  );
}

export default function WorkflowDetail({ id }: { id: string }) {
  const [workflow, setWorkflow] = useState<Workflow | null>(null);
  const [milestones, setMilestones] = useState<Milestone[] | null>(null);
  const [forks, setForks] = useState<Workflow[]>([]);
  const [error, setError] = useState<unknown>(null);
  const base = `/api/autonomous/workflows/${encodeURIComponent(id)}`;

  const loadWorkflow = useCallback(
    () =>
      api
        .get<Workflow>(base)
        .then((w) => {
          setWorkflow(w);
          setError(null);
        })
        .catch(setError),
    [base],
  );
  const loadTimeline = useCallback(
    () =>
      api
        .get<{ milestones: Milestone[] }>(`${base}/timeline`)
        .then((t) => setMilestones(t.milestones))
        .catch(setError),
    [base],
  );
  const loadForks = useCallback(
    () =>
      api
        .get<{ forks: Workflow[] }>(`${base}/forks`)
        .then((f) => setForks(f.forks))
        .catch(() => undefined),
    [base],
  );

  // Coalesced refreshes: at most one of each in flight, one more queued behind it.
  const pending = useRef({ wf: false, tl: false, timer: 0 as unknown as ReturnType<typeof setTimeout> | 0 });
  const refresh = useCallback(
    (what: { wf?: boolean; tl?: boolean }) => {
      const p = pending.current;
      p.wf ||= !!what.wf;
      p.tl ||= !!what.tl;
      if (p.timer) return;
      p.timer = setTimeout(async () => {
        const { wf, tl } = p;
        p.wf = false;
        p.tl = false;
        await Promise.all([wf ? loadWorkflow() : null, tl ? loadTimeline() : null]);
        p.timer = 0;
        if (p.wf || p.tl) refresh({});
      }, 150);
    },
    [loadWorkflow, loadTimeline],
  );

  useEffect(() => {
    setWorkflow(null);
    setMilestones(null);
    loadWorkflow();
    loadTimeline();
    loadForks();
    return () => {
      const t = pending.current.timer;
      if (t) clearTimeout(t);
    };
  }, [loadWorkflow, loadTimeline, loadForks]);

  const onStatus = useCallback(
    (status: string) => {
      setWorkflow((w) => (w ? { ...w, status: status as Workflow['status'] } : w));
      refresh({ wf: true, tl: true });
    },
    [refresh],
  );
  const onMilestone = useCallback(() => refresh({ wf: true, tl: true }), [refresh]);
  // A slow safety net beside the stream (it is process-local and may drop): re-read while not over.
  const over = !workflow || ['completed', 'failed', 'cancelled'].includes(workflow.status);
  useEffect(() => {
    if (over) return;
    const t = setInterval(() => refresh({ wf: true, tl: true }), POLL_MS);
    return () => clearInterval(t);
  }, [over, refresh]);
  const onChanged = useCallback(() => {
    refresh({ wf: true, tl: true });
    loadForks();
  }, [refresh, loadForks]);

  if (error && !workflow)
    return (
      <section>
        <p>
          <a href="/autonomous">← All workflows</a>
        </p>
        <h1>Workflow</h1>
        <ErrorBox error={error} />
        {error instanceof ApiError && error.status === 404 && (
          <p>
            It may have been deleted. <a href="/autonomous">Back to the list</a>.
          </p>
        )}
      </section>
    );
  if (!workflow) return <Loading />;

  const failure = explainFailure(workflow, milestones ?? []);
  const snap = (workflow.definition_snapshot ?? {}) as { batch?: { position: number; count: number } | null };
  return (
    <section>
      <p>
        <a href="/autonomous">← All workflows</a>
      </p>
      <div class="aw-head">
        <h1>{workflow.title || 'Workflow'}</h1>
        <StatusBadge status={workflow.status} pausedBy={workflow.paused_by} />
      </div>
      <ErrorBox error={error} />
      {failure ? (
        <div class="error-box" role="alert" data-testid="failure-banner">
          <strong>Workflow failed: </strong>
          {failure.cause}
          {failure.fix && <p class="aw-fix">{failure.fix}</p>}
          <p class="muted">({failure.summary})</p>
        </div>
      ) : (
        workflow.error && <ErrorBox title="Workflow error" error={workflow.error} />
      )}
      <Facts
        items={[
          ['Id', <code key="id">{workflow.id}</code>],
          ['Phase', workflow.current_phase.replace(/_/g, ' ')],
          ['Requirement', requirementOf(workflow)],
          ['Project', workflow.project_path ?? '—'],
          ['CLI tool / model', `${workflow.cli_tool ?? '—'} / ${workflow.model ?? 'default'}`],
          [
            'Branch',
            `${workflow.branch ?? '—'} (${(workflow.branch_strategy ?? 'worktree').replace(/_/g, ' ')})`,
          ],
          [
            'Tokens',
            tokenBreakdown(
              workflow.total_tokens,
              workflow.input_tokens,
              workflow.output_tokens,
              workflow.request_count,
            ),
          ],
          ['Verification', workflow.verification_status ?? '—'],
          ['Created', formatTime(workflow.created_at)],
          ['Completed', formatTime(workflow.completed_at)],
          ...(snap.batch
            ? ([
                [
                  'Batch',
                  <a key="b" href={`/autonomous?batch_id=${encodeURIComponent(workflow.batch_id ?? '')}`}>
                    item {snap.batch.position + 1} of {snap.batch.count}
                  </a>,
                ],
              ] as [string, ComponentChildren][])
            : []),
          ...(workflow.forked_from_workflow_id
            ? ([
                [
                  'Forked from',
                  <a key="f" href={`/autonomous/${workflow.forked_from_workflow_id}`}>
                    {workflow.forked_from_workflow_id} at milestone {workflow.forked_from_milestone_id}
                  </a>,
                ],
              ] as [string, ComponentChildren][])
            : []),
          ...(workflow.verified_by ? ([['Verified by', workflow.verified_by]] as [string, string][]) : []),
        ]}
      />
      <h2>Controls</h2>
      <ControlBar key={workflow.id} workflow={workflow} onChanged={onChanged} />
      <h2>Timeline</h2>
      {milestones ? (
        <Timeline workflow={workflow} milestones={milestones} onChanged={onChanged} />
      ) : (
        <Loading label="Loading the timeline…" />
      )}
      <h2>Live activity</h2>
      <ActivityFeed
        workflowId={workflow.id}
        onMilestone={onMilestone}
        onStatus={onStatus}
        onConnected={onMilestone}
      />
      <h2>Pull request</h2>
      <PullRequest workflow={workflow} />
      <h2>Forks</h2>
      <Table<Workflow>
        caption="Workflows forked from this one"
        rows={forks}
        rowKey={(w) => w.id}
        empty="No forks. Fork at a milestone of the timeline to try another way from there."
        columns={[
          {
            key: 'id',
            header: 'Workflow',
            render: (w) => <a href={`/autonomous/${w.id}`}>{w.title || w.id}</a>,
          },
          {
            key: 'status',
            header: 'Status',
            render: (w) => <StatusBadge status={w.status} pausedBy={w.paused_by} />,
          },
          { key: 'at', header: 'At milestone', render: (w) => String(w.forked_from_milestone_id ?? '—') },
          { key: 'created_at', header: 'Created', render: (w) => formatTime(w.created_at) },
        ]}
      />
    </section>
  );
}
