// One milestone of a workflow: its facts and content (the agent's plan, review, report or the user's
// feedback), its commit diff with per-file stats (GET …/milestones/:mid/diff), and the transcript of
// its session line (GET …/milestones/:mid/session, paged 50 at a time; a milestone without a line,
// such as feedback or merge, says so), with cancel-round and fork at this milestone.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError, api } from '../../api/client.ts';
import { Button, ErrorBox, formatNumber, formatTime, Loading } from '../../ui/index.ts';
import { type DiffAnswer, isCancelled, type Milestone, tokenBreakdown, type Workflow } from './model.ts';
import { DiffView, Facts, FileStats, StatusBadge } from './parts.tsx';
import { MilestoneActions } from './timeline.tsx';

const PAGE = 50;

interface TranscriptMessage {
  id?: number;
  role: string;
  content: string | null;
  model: string | null;
  tokens_used: number;
  input_tokens: number;
  output_tokens: number;
  timestamp: string | null;
}
interface Transcript {
  line: string | null;
  session_id: string;
  messages: TranscriptMessage[];
  total: number;
  offset: number;
}

function TranscriptView({ base }: { base: string }) {
  const [offset, setOffset] = useState(0);
  const [data, setData] = useState<Transcript | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    setError(null);
    api
      .get<Transcript>(`${base}/session`, { query: { limit: PAGE, offset } })
      .then(setData)
      .catch(setError);
  }, [base, offset]);
  if (error instanceof ApiError && error.status === 404) return <p class="muted">{error.message}.</p>;
  if (error) return <ErrorBox error={error} />;
  if (!data) return <Loading label="Loading the transcript…" />;
  return (
    <div>
      <p class="muted">
        Session line <strong>{data.line ?? '—'}</strong> ({data.session_id}): {formatNumber(data.total)}{' '}
        recorded call
        {data.total === 1 ? '' : 's'} on this line across the workflow.
      </p>
      {data.messages.length === 0 ? (
        <p class="muted">Nothing recorded on this line yet.</p>
      ) : (
        <ol class="aw-transcript" aria-label="Transcript" start={data.offset + 1}>
          {data.messages.map((m, i) => (
            <li key={m.id ?? i}>
              <span class="aw-role">{m.role}</span>
              <span class="muted">
                {formatTime(m.timestamp)} · {m.model ?? '—'} · {formatNumber(m.tokens_used)} tokens
              </span>
              {m.content && <div class="aw-pre">{m.content}</div>}
            </li>
          ))}
        </ol>
      )}
      {data.total > PAGE && (
        <nav class="aw-controls" aria-label="Transcript pages">
          <Button disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
            Earlier calls
          </Button>
          <span class="muted">
            {formatNumber(offset + 1)}–{formatNumber(Math.min(offset + PAGE, data.total))} of{' '}
            {formatNumber(data.total)}
          </span>
          <Button disabled={offset + PAGE >= data.total} onClick={() => setOffset(offset + PAGE)}>
            Later calls
          </Button>
        </nav>
      )}
    </div>
  );
}

export default function MilestonePage({ id, mid }: { id: string; mid: string }) {
  const [workflow, setWorkflow] = useState<Workflow | null>(null);
  const [milestone, setMilestone] = useState<Milestone | null | undefined>(undefined);
  const [diff, setDiff] = useState<DiffAnswer | null>(null);
  const [error, setError] = useState<unknown>(null);
  const wfBase = `/api/autonomous/workflows/${encodeURIComponent(id)}`;
  const base = `${wfBase}/milestones/${encodeURIComponent(mid)}`;

  const load = useCallback(async () => {
    try {
      const [w, t] = await Promise.all([
        api.get<Workflow>(wfBase),
        api.get<{ milestones: Milestone[] }>(`${wfBase}/timeline`),
      ]);
      setWorkflow(w);
      setMilestone(t.milestones.find((m) => String(m.id) === mid) ?? null);
    } catch (err) {
      setError(err);
    }
  }, [wfBase, mid]);

  useEffect(() => {
    load();
    api.get<DiffAnswer>(`${base}/diff`).then(setDiff).catch(setError);
  }, [load, base]);

  const back = (
    <p>
      <a href={`/autonomous/${id}`}>← Back to the workflow</a>
    </p>
  );
  if (error && !workflow)
    return (
      <section>
        {back}
        <h1>Milestone</h1>
        <ErrorBox error={error} />
      </section>
    );
  if (!workflow || milestone === undefined) return <Loading />;
  if (milestone === null)
    return (
      <section>
        {back}
        <h1>Milestone</h1>
        <ErrorBox error="Milestone not found" />
      </section>
    );

  return (
    <section>
      {back}
      <div class="aw-head">
        <h1>
          Milestone {milestone.sequence}: {milestone.kind.replace(/_/g, ' ')}
        </h1>
        <span>
          Workflow <StatusBadge status={workflow.status} pausedBy={workflow.paused_by} />
        </span>
      </div>
      <ErrorBox error={error} />
      <Facts
        items={[
          ['Phase', milestone.phase.replace(/_/g, ' ')],
          ['Status', isCancelled(milestone) ? 'cancelled' : milestone.status.replace(/_/g, ' ')],
          ['Attempt', formatNumber(milestone.attempt)],
          ['Session line', milestone.session_line ?? '—'],
          [
            'Tokens',
            tokenBreakdown(
              milestone.phase_total_tokens,
              milestone.phase_input_tokens,
              milestone.phase_output_tokens,
              milestone.phase_request_count,
            ),
          ],
          ['Commit', milestone.commit_sha ?? '—'],
          ['Started', formatTime(milestone.started_at)],
          ['Finished', formatTime(milestone.finished_at)],
        ]}
      />
      {milestone.error && <ErrorBox title="Error" error={milestone.error} />}
      <MilestoneActions workflow={workflow} milestone={milestone} onChanged={load} showOpen={false} />
      <h2>Content</h2>
      {milestone.content ? <div class="aw-pre">{milestone.content}</div> : <p class="muted">No content.</p>}
      <h2>Diff</h2>
      {!diff ? (
        <Loading label="Loading the diff…" />
      ) : diff.commit_sha ? (
        <>
          <p>
            Commit <code>{diff.commit_sha}</code>: <span class="aw-add">+{formatNumber(diff.additions)}</span>{' '}
            <span class="aw-del">−{formatNumber(diff.deletions)}</span>
          </p>
          <FileStats files={diff.files} caption="Files changed at this milestone" />
          {diff.truncated && (
            <p class="notice">The diff is cut at the server's limit; the stats are complete.</p>
          )}
          <DiffView diff={diff.diff} label="Milestone diff" />
        </>
      ) : (
        <p class="muted">This milestone made no commit.</p>
      )}
      <h2>Transcript</h2>
      <TranscriptView base={base} />
    </section>
  );
}
