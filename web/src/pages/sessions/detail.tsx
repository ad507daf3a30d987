// One workspace session (GET /api/sessions/:id): its facts, figures and messages oldest first, with
// Complete (an active session) and Delete. Someone else's session, or one outside the caller's tenant,
// is the API's 404 in words.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api } from '../../api/client.ts';
import { Button, ErrorBox, formatNumber, formatTime, Loading } from '../../ui/index.ts';
import { useLoad } from '../../ui/use-load.ts';
import '../messages/messages.css';
import { STATUS_LABEL, sessionName, type WorkspaceSession } from './session-types.ts';
import './sessions.css';

interface SessionMessage {
  id: number;
  role: string;
  content: string;
  tokens_used: number;
  model: string | null;
  timestamp: string;
}

export default function SessionDetail({ id }: { id: string }) {
  const { route } = useLocation();
  const data = useLoad(
    (signal) =>
      api.get<{ session: WorkspaceSession; messages: SessionMessage[] }>(
        `/api/sessions/${encodeURIComponent(id)}`,
        {
          signal,
        },
      ),
    [id],
  );
  const [actionError, setActionError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const s = data.data?.session;

  const act = async (run: () => Promise<void>) => {
    setActionError(null);
    setBusy(true);
    try {
      await run();
    } catch (err) {
      setActionError(err);
    } finally {
      setBusy(false);
    }
  };
  const complete = () =>
    act(async () => {
      const r = await api.post<{ session: WorkspaceSession }>(
        `/api/sessions/${encodeURIComponent(id)}/complete`,
      );
      data.setData((d) => (d ? { ...d, session: r.session } : d));
    });
  const remove = () =>
    act(async () => {
      if (!window.confirm('Delete this session and its messages?')) return;
      await api.del(`/api/sessions/${encodeURIComponent(id)}`);
      route('/sessions');
    });

  return (
    <section>
      <p>
        <a href="/sessions">All sessions</a>
      </p>
      <h1>{s ? sessionName(s) : 'Session'}</h1>
      <ErrorBox error={data.error} />
      {data.loading && !data.data && <Loading />}
      {s && data.data && (
        <>
          <dl class="facts">
            <dt>Status</dt>
            <dd>{STATUS_LABEL[s.status] ?? s.status}</dd>
            <dt>Tool</dt>
            <dd>{s.tool_name}</dd>
            <dt>Type</dt>
            <dd>{s.session_type}</dd>
            <dt>Host</dt>
            <dd>{s.host_name}</dd>
            <dt>Project</dt>
            <dd>{s.project_path ?? '—'}</dd>
            <dt>Model</dt>
            <dd>{s.model ?? '—'}</dd>
            <dt>Created</dt>
            <dd>{formatTime(s.created_at)}</dd>
            <dt>{s.completed_at ? 'Completed' : 'Expires'}</dt>
            <dd>{formatTime(s.completed_at ?? s.expires_at)}</dd>
            <dt>Messages</dt>
            <dd>{formatNumber(s.message_count)}</dd>
            <dt>Requests</dt>
            <dd>{formatNumber(s.request_count)}</dd>
            <dt>Tokens</dt>
            <dd>
              {formatNumber(s.total_tokens)} ({formatNumber(s.total_input_tokens)} in,{' '}
              {formatNumber(s.total_output_tokens)} out)
            </dd>
          </dl>
          <div class="form-actions-row">
            {s.status === 'active' && (
              <Button onClick={complete} busy={busy}>
                Complete session
              </Button>
            )}
            <Button variant="danger" onClick={remove} busy={busy}>
              Delete session
            </Button>
          </div>
          <ErrorBox error={actionError} />
          <h2>Messages</h2>
          {data.data.messages.length === 0 ? (
            <p class="muted">No messages in this session.</p>
          ) : (
            <ol class="timeline" aria-label="Messages, oldest first">
              {data.data.messages.map((m) => (
                <li key={m.id} class={`role-${m.role}`}>
                  <div class="meta">
                    {m.role} · {formatTime(m.timestamp)}
                    {m.tokens_used > 0 && ` · ${formatNumber(m.tokens_used)} tokens`}
                    {m.model && ` · ${m.model}`}
                  </div>
                  <pre class="content">{m.content}</pre>
                </li>
              ))}
            </ol>
          )}
        </>
      )}
    </section>
  );
}
