// Workspace sessions (issue 14 item 2; spec document 2 "Workspace (prompts and sessions)"): the local
// sessions the caller may read (their own; administrators their tenant's), with the totals of
// GET /api/sessions/stats, filtered by status and tool, 50 a page, each linking to its detail.
// Remote sessions are in the remote workspace pages.
import { useState } from 'preact/hooks';
import { api } from '../../api/client.ts';
import { Button, ErrorBox, Field, formatNumber, formatTime, Loading, Table } from '../../ui/index.ts';
import { Pager } from '../../ui/pager.tsx';
import { SelectField } from '../../ui/select-field.tsx';
import { useLoad } from '../../ui/use-load.ts';
import { STATUS_LABEL, sessionName, type WorkspaceSession } from './session-types.ts';
import './sessions.css';

const PAGE_SIZE = 50;
const STATUSES = [
  { value: '', label: 'Any' },
  { value: 'active', label: 'Active' },
  { value: 'completed', label: 'Completed' },
  { value: 'expired', label: 'Expired' },
];

interface Stats {
  total_sessions: number;
  active_sessions: number;
  completed_sessions: number;
  expired_sessions: number;
  total_tokens: number;
  total_messages: number;
  total_requests: number;
}

export default function Sessions() {
  const [status, setStatus] = useState('');
  const [toolInput, setToolInput] = useState('');
  const [tool, setTool] = useState('');
  const [offset, setOffset] = useState(0);
  const stats = useLoad((signal) => api.get<Stats>('/api/sessions/stats', { signal }), []);
  const list = useLoad(
    (signal) =>
      api.get<{ sessions: WorkspaceSession[]; total: number }>('/api/sessions', {
        query: { status, tool_name: tool, limit: PAGE_SIZE, offset },
        signal,
      }),
    [status, tool, offset],
  );
  const s = stats.data;
  return (
    <section>
      <h1>Sessions</h1>
      <ErrorBox error={stats.error} />
      {s && (
        <dl class="session-stats" aria-label="Session totals">
          <div>
            <dt>Sessions</dt>
            <dd>{formatNumber(s.total_sessions)}</dd>
          </div>
          <div>
            <dt>Active</dt>
            <dd>{formatNumber(s.active_sessions)}</dd>
          </div>
          <div>
            <dt>Completed</dt>
            <dd>{formatNumber(s.completed_sessions)}</dd>
          </div>
          <div>
            <dt>Expired</dt>
            <dd>{formatNumber(s.expired_sessions)}</dd>
          </div>
          <div>
            <dt>Messages</dt>
            <dd>{formatNumber(s.total_messages)}</dd>
          </div>
          <div>
            <dt>Tokens</dt>
            <dd>{formatNumber(s.total_tokens)}</dd>
          </div>
        </dl>
      )}
      <form
        class="session-filters"
        aria-label="Filter sessions"
        onSubmit={(e) => {
          e.preventDefault();
          setOffset(0);
          setTool(toolInput.trim());
        }}
      >
        <SelectField
          label="Status"
          value={status}
          options={STATUSES}
          onValue={(v) => {
            setOffset(0);
            setStatus(v);
          }}
        />
        <Field label="Tool" value={toolInput} onValue={setToolInput} />
        <Button type="submit">Filter</Button>
      </form>
      <ErrorBox error={list.error} />
      {list.loading && !list.data && <Loading />}
      {list.data && (
        <>
          <Table
            caption={`${formatNumber(list.data.total)} ${list.data.total === 1 ? 'session' : 'sessions'}`}
            rowKey={(x) => x.session_id}
            rows={list.data.sessions}
            empty={status || tool ? 'No session matches.' : 'No workspace sessions yet.'}
            columns={[
              {
                key: 'title',
                header: 'Session',
                render: (x) => <a href={`/sessions/${encodeURIComponent(x.session_id)}`}>{sessionName(x)}</a>,
              },
              { key: 'tool_name', header: 'Tool' },
              { key: 'status', header: 'Status', render: (x) => STATUS_LABEL[x.status] ?? x.status },
              { key: 'project_path', header: 'Project', render: (x) => x.project_path ?? '—' },
              {
                key: 'messages',
                header: 'Messages',
                numeric: true,
                render: (x) => formatNumber(x.message_count),
              },
              { key: 'tokens', header: 'Tokens', numeric: true, render: (x) => formatNumber(x.total_tokens) },
              { key: 'updated_at', header: 'Last activity', render: (x) => formatTime(x.updated_at) },
            ]}
          />
          <Pager offset={offset} total={list.data.total} pageSize={PAGE_SIZE} onOffset={setOffset} />
        </>
      )}
    </section>
  );
}
