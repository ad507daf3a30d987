// Messages (issue 14 item 2): stored messages searched and filtered with GET /api/messages' filters
// (full-text search, dates, tool, host, sender, role), 50 a page, with the number of matches
// (GET /api/messages/count); each message links to its conversation's timeline. The filters live in
// the address, so a search is a link and Back works.
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api } from '../../api/client.ts';
import { Button, ErrorBox, Field, formatNumber, formatTime, Loading, Table } from '../../ui/index.ts';
import { SelectField } from '../../ui/select-field.tsx';
import { useLoad } from '../../ui/use-load.ts';
import {
  conversationOf,
  type FilterRuleMatch,
  filterError,
  filtersFromQuery,
  filtersToQuery,
  type MessageFilters,
  messagesHref,
  PAGE_SIZE,
  snippet,
  verdictWords,
} from './filters.ts';
import './messages.css';

export interface Message {
  id: number;
  message_id: string;
  date: string;
  tool_name: string;
  host_name: string | null;
  role: string;
  content: string | null;
  tokens_used: number;
  model: string | null;
  timestamp: string | null;
  sender_name: string | null;
  conversation_id: string | null;
  agent_session_id: string | null;
  /** Extra fields: the content filter's verdict and its rules (null / [] when not flagged). */
  filter_verdict?: string | null;
  filter_rules?: FilterRuleMatch[];
}

const ROLES = [
  { value: '', label: 'Any' },
  { value: 'user', label: 'User' },
  { value: 'assistant', label: 'Assistant' },
];

export default function Messages() {
  const { query, route } = useLocation();
  const { filters, offset } = filtersFromQuery(query);
  const key = JSON.stringify(filtersToQuery(filters, offset));
  const [form, setForm] = useState<MessageFilters>(filters);
  const [formError, setFormError] = useState<string | null>(null);
  // The form follows the address (Back, a link).
  useEffect(() => setForm(filters), [key]);

  const list = useLoad(
    (signal) => {
      const q = { ...filtersToQuery(filters), limit: PAGE_SIZE, offset };
      return Promise.all([
        api.get<{ messages: Message[]; has_more: boolean }>('/api/messages', { query: q, signal }),
        api.get<{ count: number }>('/api/messages/count', { query: filtersToQuery(filters), signal }),
      ]);
    },
    [key],
  );
  const set = (k: keyof MessageFilters) => (v: string) => setForm((f) => ({ ...f, [k]: v }));

  const onSubmit = (e: Event) => {
    e.preventDefault();
    const err = filterError(form);
    setFormError(err);
    if (!err) route(messagesHref(form));
  };
  const [page, count] = list.data ?? [undefined, undefined];

  return (
    <section>
      <h1>Messages</h1>
      <p>
        <a href="/messages/conversations">Browse conversations</a>
      </p>
      <form class="filters" onSubmit={onSubmit} aria-label="Search messages">
        <div class="filters-grid">
          <Field label="Search" type="search" value={form.search} onValue={set('search')} name="search" />
          <Field label="From date" type="date" value={form.start_date} onValue={set('start_date')} />
          <Field label="To date" type="date" value={form.end_date} onValue={set('end_date')} />
          <Field label="Tool" value={form.tool} onValue={set('tool')} />
          <Field label="Host" value={form.host} onValue={set('host')} />
          <Field label="Sender" value={form.sender} onValue={set('sender')} />
          <SelectField label="Role" value={form.role} options={ROLES} onValue={set('role')} />
        </div>
        <ErrorBox error={formError} />
        <div class="actions">
          <Button type="submit" variant="primary">
            Search
          </Button>
          <Button onClick={() => route('/messages')}>Clear</Button>
        </div>
      </form>

      <ErrorBox error={list.error} />
      {list.loading && !list.data && <Loading />}
      {page && count && (
        <>
          <p class="muted" role="status">
            {formatNumber(count.count)} {count.count === 1 ? 'message matches' : 'messages match'}
            {count.count > 0 &&
              `; showing ${formatNumber(offset + 1)}–${formatNumber(offset + page.messages.length)}`}
            .
          </p>
          <Table
            caption="Messages, newest first"
            rowKey={(m) => m.id}
            rows={page.messages}
            empty="No messages match these filters."
            columns={[
              {
                key: 'time',
                header: 'Time',
                render: (m) => (m.timestamp ? formatTime(m.timestamp) : m.date),
              },
              { key: 'tool_name', header: 'Tool' },
              { key: 'sender_name', header: 'Sender', render: (m) => m.sender_name ?? '—' },
              { key: 'role', header: 'Role' },
              {
                key: 'content',
                header: 'Message',
                render: (m) => (
                  <>
                    <span class="snippet">{snippet(m.content)}</span>
                    {verdictWords(m) && (
                      <span class={`verdict verdict-${m.filter_verdict}`} data-verdict={m.filter_verdict}>
                        {verdictWords(m)}
                      </span>
                    )}
                  </>
                ),
              },
              { key: 'tokens', header: 'Tokens', numeric: true, render: (m) => formatNumber(m.tokens_used) },
              {
                key: 'conversation',
                header: 'Conversation',
                render: (m) => {
                  const c = conversationOf(m);
                  return c ? <a href={`/messages/conversations/${encodeURIComponent(c)}`}>Timeline</a> : '—';
                },
              },
            ]}
          />
          <nav class="pager" aria-label="Pages">
            <Button
              disabled={offset === 0}
              onClick={() => route(messagesHref(filters, Math.max(0, offset - PAGE_SIZE)))}
            >
              Previous page
            </Button>
            <Button
              disabled={!page.has_more}
              onClick={() => route(messagesHref(filters, offset + PAGE_SIZE))}
            >
              Next page
            </Button>
          </nav>
        </>
      )}
    </section>
  );
}
