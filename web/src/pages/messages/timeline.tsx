// One conversation's timeline: its figures (GET /api/conversation-details/:id) and every message,
// oldest first (GET /api/conversation-timeline/:id), user turns left, assistant turns right. An
// unknown conversation, or one outside the caller's tenant, is the API's 404 in words.
import { api } from '../../api/client.ts';
import { ErrorBox, formatNumber, formatTime, Loading } from '../../ui/index.ts';
import { useLoad } from '../../ui/use-load.ts';
import type { Message } from './index.tsx';
import './messages.css';

interface Details {
  session_id: string;
  tool_names: string[];
  host_names: string[];
  senders: string[];
  models: string[];
  started_at: string | null;
  last_message_at: string | null;
  first_date: string | null;
  message_count: number;
  requests: number;
  total_tokens: number;
  total_input_tokens: number;
  total_output_tokens: number;
}

export default function Timeline({ id }: { id: string }) {
  const data = useLoad(
    (signal) => {
      const sid = encodeURIComponent(id);
      return Promise.all([
        api.get<Details>(`/api/conversation-details/${sid}`, { signal }),
        api.get<{ messages: Message[] }>(`/api/conversation-timeline/${sid}`, { signal }),
      ]);
    },
    [id],
  );
  const [details, timeline] = data.data ?? [];
  const list = (xs: string[]) => (xs.length ? xs.join(', ') : '—');
  return (
    <section>
      <h1>Conversation</h1>
      <p>
        <a href="/messages/conversations">All conversations</a> · <a href="/messages">Search messages</a>
      </p>
      <ErrorBox error={data.error} />
      {data.loading && !data.data && <Loading />}
      {details && timeline && (
        <>
          <dl class="facts">
            <dt>Id</dt>
            <dd>{details.session_id}</dd>
            <dt>Tool</dt>
            <dd>{list(details.tool_names)}</dd>
            <dt>Host</dt>
            <dd>{list(details.host_names)}</dd>
            <dt>Senders</dt>
            <dd>{list(details.senders)}</dd>
            <dt>Models</dt>
            <dd>{list(details.models)}</dd>
            <dt>Started</dt>
            <dd>{formatTime(details.started_at ?? details.first_date)}</dd>
            <dt>Last message</dt>
            <dd>{formatTime(details.last_message_at)}</dd>
            <dt>Messages</dt>
            <dd>{formatNumber(details.message_count)}</dd>
            <dt>Requests</dt>
            <dd>{formatNumber(details.requests)}</dd>
            <dt>Tokens</dt>
            <dd>
              {formatNumber(details.total_tokens)} ({formatNumber(details.total_input_tokens)} in,{' '}
              {formatNumber(details.total_output_tokens)} out)
            </dd>
          </dl>
          <h2>Timeline</h2>
          {timeline.messages.length === 0 ? (
            <p class="muted">This conversation has no stored messages.</p>
          ) : (
            <ol class="timeline" aria-label="Messages, oldest first">
              {timeline.messages.map((m) => (
                <li key={m.id} class={`role-${m.role}`}>
                  <div class="meta">
                    {m.role === 'assistant' ? 'Assistant' : (m.sender_name ?? 'User')} ·{' '}
                    {m.timestamp ? formatTime(m.timestamp) : m.date}
                    {m.tokens_used > 0 && ` · ${formatNumber(m.tokens_used)} tokens`}
                    {m.model && ` · ${m.model}`}
                  </div>
                  <pre class="content">{m.content ?? ''}</pre>
                </li>
              ))}
            </ol>
          )}
        </>
      )}
    </section>
  );
}
