// The milestone timeline of a workflow (GET …/timeline): one row per milestone in sequence with its
// phase, kind, status, its own tokens (phase_*), commit and diff stats, error; cancelled rows are
// struck through and say so; retries of one step that failed the same way are one row with their
// count (model.ts timelineRows). The footer sums the per-milestone tokens: the workflow's total_tokens is
// that same sum on the server, and the page shows both. Each row opens the milestone (diff and
// transcript) and offers cancel-round (asks first) and fork.

import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError, api } from '../../api/client.ts';
import { ConfirmPrompt } from '../../ui/confirm.tsx';
import { Button, ErrorBox, formatNumber, formatTime } from '../../ui/index.ts';
import {
  cancelRoundQuestion,
  isCancelled,
  type Milestone,
  summarizeTimeline,
  timelineRows,
  tokenParts,
  type Workflow,
} from './model.ts';

/** Cancel-round and fork at one milestone (used by the timeline and the milestone page). */
export function MilestoneActions({
  workflow,
  milestone,
  onChanged,
  showOpen = true,
}: {
  workflow: Pick<Workflow, 'id' | 'status'>;
  milestone: Milestone;
  onChanged: () => void;
  /** The milestone page itself does not link to itself. */
  showOpen?: boolean;
}) {
  const { route } = useLocation();
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState<'cancel' | 'fork' | null>(null);
  const [error, setError] = useState<{ what: string; err: unknown } | null>(null);
  const base = `/api/autonomous/workflows/${encodeURIComponent(workflow.id)}/milestones/${milestone.id}`;
  const label = `milestone ${milestone.sequence}`;

  const cancel = async () => {
    setBusy('cancel');
    setError(null);
    try {
      await api.post(`${base}/cancel`);
      setAsking(false);
      onChanged();
    } catch (err) {
      setAsking(false);
      setError({ what: 'Cancel round', err });
    } finally {
      setBusy(null);
    }
  };
  const fork = async () => {
    setBusy('fork');
    setError(null);
    try {
      const forked = await api.post<{ id: string }>(`${base}/fork`);
      route(`/autonomous/${forked.id}`);
    } catch (err) {
      setError({ what: 'Fork', err });
      setBusy(null);
    }
  };
  const over = workflow.status === 'completed' || workflow.status === 'cancelled';

  return (
    <div>
      <div class="aw-row-actions">
        {showOpen && (
          <a href={`/autonomous/${workflow.id}/milestones/${milestone.id}`} aria-label={`Open ${label}`}>
            Open
          </a>
        )}
        {!over && !isCancelled(milestone) && (
          <Button variant="link" onClick={() => setAsking(true)} aria-label={`Cancel round at ${label}`}>
            Cancel round
          </Button>
        )}
        <Button variant="link" busy={busy === 'fork'} onClick={fork} aria-label={`Fork at ${label}`}>
          Fork
        </Button>
      </div>
      {asking && (
        <ConfirmPrompt
          cancelLabel="Keep it"
          question={cancelRoundQuestion(milestone)}
          confirmLabel="Yes, cancel the round"
          busy={busy === 'cancel'}
          onConfirm={cancel}
          onCancel={() => setAsking(false)}
        />
      )}
      {error && (
        <ErrorBox
          title={
            error.err instanceof ApiError && error.err.status === 409
              ? `${error.what} refused`
              : `${error.what} failed`
          }
          error={error.err}
        />
      )}
    </div>
  );
}

export function Timeline({
  workflow,
  milestones,
  onChanged,
}: {
  workflow: Workflow;
  milestones: Milestone[];
  onChanged: () => void;
}) {
  const sum = summarizeTimeline(milestones);
  return (
    <div class="table-wrap">
      <table aria-describedby="aw-timeline-sum">
        <caption>Milestone timeline</caption>
        <thead>
          <tr>
            <th scope="col" class="num">
              #
            </th>
            <th scope="col">Phase</th>
            <th scope="col">Kind</th>
            <th scope="col">Status</th>
            <th scope="col" class="num">
              Tokens
            </th>
            <th scope="col">Commit</th>
            <th scope="col">Finished</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {milestones.length === 0 ? (
            <tr>
              <td colSpan={8} class="empty">
                No milestones yet: the first appears when planning starts.
              </td>
            </tr>
          ) : (
            timelineRows(milestones).map(({ milestone: m, attempts, firstSequence, tokens }) => {
              const cancelled = isCancelled(m);
              return (
                <tr
                  key={m.id}
                  class={cancelled ? 'aw-cancelled' : undefined}
                  data-kind={m.kind}
                  data-attempts={attempts}
                >
                  <td class="num">{attempts > 1 ? `${firstSequence}–${m.sequence}` : m.sequence}</td>
                  <td>{m.phase.replace(/_/g, ' ')}</td>
                  <td>
                    {m.kind.replace(/_/g, ' ')}
                    {attempts > 1
                      ? ` (${attempts} attempts, all failed the same way)`
                      : m.attempt > 1
                        ? ` (attempt ${m.attempt})`
                        : ''}
                  </td>
                  <td class="aw-keep">
                    {cancelled ? 'cancelled' : m.status.replace(/_/g, ' ')}
                    {m.error && <div class="field-error">{m.error}</div>}
                  </td>
                  <td
                    class="num"
                    title={`${formatNumber(tokens.input)} in, ${formatNumber(tokens.output)} out, ${formatNumber(tokens.requests)} requests`}
                  >
                    {formatNumber(tokens.total)}
                  </td>
                  <td>
                    {m.commit_sha ? (
                      <>
                        <code>{m.commit_sha.slice(0, 10)}</code>{' '}
                        <span class="aw-add">+{formatNumber(m.diff_additions)}</span>{' '}
                        <span class="aw-del">−{formatNumber(m.diff_deletions)}</span>{' '}
                        <span class="muted">
                          ({formatNumber(m.diff_files)} file{m.diff_files === 1 ? '' : 's'})
                        </span>
                      </>
                    ) : (
                      '—'
                    )}
                  </td>
                  <td>{formatTime(m.finished_at)}</td>
                  <td class="aw-keep">
                    <MilestoneActions workflow={workflow} milestone={m} onChanged={onChanged} />
                  </td>
                </tr>
              );
            })
          )}
        </tbody>
        <tfoot>
          <tr>
            <th scope="row" colSpan={4}>
              Total of the milestones
            </th>
            <td class="num aw-sum" data-testid="timeline-total">
              {formatNumber(sum.total)}
            </td>
            <td colSpan={3} class="muted">
              {tokenParts(sum.input, sum.output, sum.requests)}
            </td>
          </tr>
        </tfoot>
      </table>
      <p id="aw-timeline-sum" class="muted">
        Per phase:{' '}
        {sum.byPhase.length === 0
          ? 'nothing spent yet'
          : sum.byPhase.map((p) => `${p.phase.replace(/_/g, ' ')} ${formatNumber(p.tokens)}`).join(' · ')}
        . Workflow total: <span data-testid="workflow-total">{formatNumber(workflow.total_tokens)}</span>{' '}
        tokens.
      </p>
    </div>
  );
}
