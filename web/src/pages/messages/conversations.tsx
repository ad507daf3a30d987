// Conversations (GET /api/conversation-history): messages grouped by agent session or conversation
// id, most recently active first, 50 a page, each linking to its timeline.
import { useState } from 'preact/hooks';
import { api } from '../../api/client.ts';
import { Button, ErrorBox, formatNumber, Loading, Table } from '../../ui/index.ts';
import { useLoad } from '../../ui/use-load.ts';
import { lastMessageLabel, PAGE_SIZE } from './filters.ts';
import './messages.css';

interface Conversation {
  session_id: string;
  tool_name: string | null;
  host_name: string | null;
  first_date: string | null;
  last_date: string | null;
  started_at: string | null;
  last_message_at: string | null;
  message_count: number;
  requests: number;
  tokens: number;
}

export default function Conversations() {
  const [offset, setOffset] = useState(0);
  const list = useLoad(
    (signal) =>
      api.get<{ conversations: Conversation[]; has_more: boolean }>('/api/conversation-history', {
        query: { limit: PAGE_SIZE, offset },
        signal,
      }),
    [offset],
  );
  return (
    <section>
      <h1>Conversations</h1>
      <p>
        <a href="/messages">Search messages</a>
      </p>
      <ErrorBox error={list.error} />
      {list.loading && !list.data && <Loading />}
      {list.data && (
        <>
          <Table
            caption="Conversations, most recently active first"
            rowKey={(c) => c.session_id}
            rows={list.data.conversations}
            empty="No conversations yet."
            columns={[
              {
                key: 'session_id',
                header: 'Conversation',
                render: (c) => (
                  <a href={`/messages/conversations/${encodeURIComponent(c.session_id)}`}>{c.session_id}</a>
                ),
              },
              { key: 'tool_name', header: 'Tool', render: (c) => c.tool_name ?? '—' },
              { key: 'host_name', header: 'Host', render: (c) => c.host_name ?? '—' },
              { key: 'last_message_at', header: 'Last message', render: (c) => lastMessageLabel(c) },
              {
                key: 'message_count',
                header: 'Messages',
                numeric: true,
                render: (c) => formatNumber(c.message_count),
              },
              { key: 'requests', header: 'Requests', numeric: true, render: (c) => formatNumber(c.requests) },
              { key: 'tokens', header: 'Tokens', numeric: true, render: (c) => formatNumber(c.tokens) },
            ]}
          />
          <nav class="pager" aria-label="Pages">
            <Button disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE_SIZE))}>
              Previous page
            </Button>
            <Button disabled={!list.data.has_more} onClick={() => setOffset(offset + PAGE_SIZE)}>
              Next page
            </Button>
          </nav>
        </>
      )}
    </section>
  );
}
