// One remote session (issue 14 item 3): its state, the chat with live output, the controls and the
// permission prompts. Output comes from GET /api/remote/sessions/:id (first page) and then the SSE
// stream /output/stream?from=<next index>; every event carries its event_index as the SSE id, so
// EventSource's own reconnect resumes by Last-Event-ID and a page reload replays from the stored buffer.
// All arrivals go through mergeOutput (dedupe by index): nothing lost, nothing doubled.
// Controls: POST chat, pause, resume, stop, abort, model; permission answers POST /permission.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, openStream } from '../../api/client.ts';
import { Button, ErrorBox, Field, formatNumber, formatTime, Loading } from '../../ui/index.ts';
import { TextareaField } from '../../ui/textarea-field.tsx';
import { useLoad } from '../../ui/use-load.ts';
import {
  describeEvent,
  mergeOutput,
  nextIndex,
  type OutputEvent,
  pendingPermissions,
} from './output-model.ts';
import { isLive, type RemoteSessionDetail, sessionStatusWord } from './types.ts';
import './remote.css';

const answeredKey = (id: string) => `remote-answered:${id}`;

function loadAnswered(id: string): Set<string> {
  try {
    const raw = sessionStorage.getItem(answeredKey(id));
    const v = raw ? JSON.parse(raw) : [];
    return new Set(Array.isArray(v) ? v.filter((x) => typeof x === 'string') : []);
  } catch {
    return new Set();
  }
}

function Output({ events }: { events: OutputEvent[] }) {
  const lines = useMemo(() => events.map(describeEvent).filter((l) => l !== null), [events]);
  const end = useRef<HTMLDivElement>(null);
  useEffect(() => {
    end.current?.scrollIntoView?.({ block: 'nearest' });
  }, [lines.length]);
  return (
    <div class="remote-output" role="log" aria-live="polite" aria-label="Session output">
      {lines.length === 0 && <p class="muted">No output yet.</p>}
      {lines.map((l) => (
        <div key={l.index} class={`remote-line remote-line-${l.kind}`} data-index={l.index}>
          <time class="remote-line-time" dateTime={l.timestamp}>
            {formatTime(l.timestamp)}
          </time>
          <span class="remote-line-text">{l.text}</span>
        </div>
      ))}
      <div ref={end} />
    </div>
  );
}

export default function RemoteSessionPage({ id }: { id: string }) {
  const detail = useLoad(
    (signal) =>
      api.get<{ session: RemoteSessionDetail }>(`/api/remote/sessions/${encodeURIComponent(id)}`, { signal }),
    [id],
  );
  const session = detail.data?.session;
  const [events, setEvents] = useState<OutputEvent[]>([]);
  const [streaming, setStreaming] = useState(false);
  const [answered, setAnswered] = useState<Set<string>>(() => loadAnswered(id));
  const [message, setMessage] = useState('');
  const [model, setModel] = useState('');
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState('');
  const started = useRef(false);

  // The first page of output comes with the detail; the stream continues from there.
  useEffect(() => {
    if (!session || started.current) return;
    started.current = true;
    const first = session.output ?? [];
    setEvents((prev) => mergeOutput(prev, first));
    const from = Math.max(nextIndex(first), session.output_next_index ?? 0);
    const close = openStream(
      `/api/remote/sessions/${encodeURIComponent(id)}/output/stream`,
      {
        onOpen: () => setStreaming(true),
        events: {
          output: (data: OutputEvent) => {
            if (data && typeof data.event_index === 'number') setEvents((prev) => mergeOutput(prev, [data]));
          },
          end: () => {
            setStreaming(false);
            close();
            detail.reload();
          },
        },
        onError: () => setStreaming(false),
      },
      { from },
    );
    return close;
  }, [session?.session_id]);

  useEffect(() => {
    started.current = false;
    setEvents([]);
    setAnswered(loadAnswered(id));
  }, [id]);

  const prompts = useMemo(() => pendingPermissions(events, answered), [events, answered]);
  const path = `/api/remote/sessions/${encodeURIComponent(id)}`;

  const act = async (name: string, run: () => Promise<unknown>, done?: string) => {
    setBusy(name);
    setError(null);
    setNotice('');
    try {
      await run();
      if (done) setNotice(done);
      detail.reload();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(null);
    }
  };

  const send = (e: Event) => {
    e.preventDefault();
    const content = message;
    if (!content.trim()) return;
    void act('chat', async () => {
      await api.post(`${path}/chat`, { content });
      setMessage('');
    });
  };

  const answer = (requestId: string, decision: 'allow' | 'deny') =>
    act(`perm-${requestId}`, async () => {
      const r = await api.post<{ agent_acknowledged: boolean }>(`${path}/permission`, {
        request_id: requestId,
        decision,
      });
      const next = new Set(answered).add(requestId);
      setAnswered(next);
      try {
        sessionStorage.setItem(answeredKey(id), JSON.stringify([...next]));
      } catch {}
      setNotice(
        r.agent_acknowledged
          ? `Answer "${decision}" reached the tool`
          : `Answer "${decision}" sent; the machine has not confirmed it yet`,
      );
    });

  if (detail.loading && !session) return <Loading />;
  if (!session)
    return (
      <section>
        <h1>Remote session</h1>
        <ErrorBox error={detail.error} />
        <p>
          <a href="/remote">Back to the remote workspace</a>
        </p>
      </section>
    );

  const live = isLive(session.status);
  return (
    <section class="remote-session">
      <p>
        <a href="/remote">Remote workspace</a>
      </p>
      <h1>{session.title || session.project_path || 'Remote session'}</h1>
      <dl class="remote-facts" aria-label="Session">
        <div>
          <dt>Status</dt>
          <dd data-testid="session-status">{sessionStatusWord(session)}</dd>
        </div>
        <div>
          <dt>Project</dt>
          <dd>{session.project_path}</dd>
        </div>
        <div>
          <dt>Tool</dt>
          <dd>{session.cli_tool}</dd>
        </div>
        <div>
          <dt>Model</dt>
          <dd>{session.model || 'default'}</dd>
        </div>
        <div>
          <dt>Tokens</dt>
          <dd>{formatNumber(session.total_tokens ?? 0)}</dd>
        </div>
        <div>
          <dt>Live output</dt>
          <dd>{streaming ? 'connected' : live ? 'reconnecting…' : 'finished'}</dd>
        </div>
      </dl>

      <div class="remote-controls">
        {session.status === 'active' && (
          <Button
            busy={busy === 'pause'}
            onClick={() => act('pause', () => api.post(`${path}/pause`), 'Paused')}
          >
            Pause
          </Button>
        )}
        {session.status === 'paused' && (
          <Button
            busy={busy === 'resume'}
            onClick={() => act('resume', () => api.post(`${path}/resume`), 'Resumed')}
          >
            Resume
          </Button>
        )}
        {live && (
          <>
            <Button
              busy={busy === 'abort'}
              onClick={() =>
                act('abort', () => api.post(`${path}/abort`), 'The current turn was interrupted')
              }
            >
              Abort turn
            </Button>
            <Button
              variant="danger"
              busy={busy === 'stop'}
              onClick={() => act('stop', () => api.post(`${path}/stop`), 'Stopped')}
            >
              Stop session
            </Button>
            <a class="btn btn-secondary" href={`/remote/sessions/${encodeURIComponent(id)}/terminal`}>
              Terminal
            </a>
          </>
        )}
      </div>
      {live && (
        <form
          class="remote-model"
          aria-label="Change model"
          onSubmit={(e) => {
            e.preventDefault();
            if (model.trim())
              void act('model', () => api.post(`${path}/model`, { model: model.trim() }), 'Model changed');
          }}
        >
          <Field label="New model" value={model} onValue={setModel} />
          <Button type="submit" busy={busy === 'model'}>
            Change model
          </Button>
        </form>
      )}
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <ErrorBox error={error} />

      {prompts.length > 0 && (
        <section class="remote-permissions" aria-labelledby="remote-permissions-title">
          <h2 id="remote-permissions-title">Permission requests</h2>
          {prompts.map((p) => (
            <div class="remote-permission" key={p.requestId}>
              <p>
                The tool asks to use <strong>{p.tool}</strong>
                {p.input && <code class="remote-permission-input">{p.input}</code>}
              </p>
              <Button
                variant="primary"
                busy={busy === `perm-${p.requestId}`}
                disabled={!live}
                onClick={() => answer(p.requestId, 'allow')}
              >
                Allow
              </Button>{' '}
              <Button
                variant="danger"
                busy={busy === `perm-${p.requestId}`}
                disabled={!live}
                onClick={() => answer(p.requestId, 'deny')}
              >
                Deny
              </Button>
            </div>
          ))}
        </section>
      )}

      <h2>Conversation</h2>
      <Output events={events} />
      {live ? (
        <form class="remote-chat" onSubmit={send} aria-label="Send a message">
          <TextareaField label="Message" value={message} onValue={setMessage} rows={3} />
          <Button type="submit" variant="primary" busy={busy === 'chat'}>
            Send
          </Button>
        </form>
      ) : (
        <p class="muted">This session has ended; its output stays readable here.</p>
      )}
    </section>
  );
}
