// The live activity stream of a workflow (GET …/events/stream, SSE): connected, keepalive, tool use,
// assistant text, usage, retries, system events, errors and milestone_updated, shown newest last in a
// bounded feed that follows the bottom unless the reader scrolled up. The page is told about
// milestone_updated (refresh the timeline) and system/status (refresh the status) through callbacks.
// The stream is observability only and process-local: after a reconnect it resumes, it does not
// replay (the page re-reads the workflow and timeline on every `connected`); the milestones stay the
// record.
import { useEffect, useRef, useState } from 'preact/hooks';
import { openStream } from '../../api/client.ts';
import { formatTime } from '../../ui/index.ts';
import { type ActivityEntry, appendActivity } from './model.ts';

const TYPES = [
  'connected',
  'keepalive',
  'tool_use',
  'assistant_text',
  'usage',
  'retry',
  'system',
  'milestone_updated',
] as const;

/** The connection as the EventSource reports it (onopen / onerror with its readyState). */
const STATE_WORDS = {
  connecting: 'connecting…',
  live: 'connected',
  reconnecting: 'reconnecting…',
  closed: 'disconnected (reload the page to reconnect)',
} as const;

export function ActivityFeed({
  workflowId,
  onMilestone,
  onStatus,
  onConnected,
}: {
  workflowId: string;
  onMilestone: () => void;
  onStatus: (status: string) => void;
  /** Every (re)connect: the stream does not replay, so the page re-reads what it may have missed. */
  onConnected: () => void;
}) {
  const [items, setItems] = useState<ActivityEntry[]>([]);
  const [state, setState] = useState<'connecting' | 'live' | 'reconnecting' | 'closed'>('connecting');
  const listRef = useRef<HTMLOListElement>(null);
  const follow = useRef(true);
  const handlers = useRef({ onMilestone, onStatus, onConnected });
  handlers.current = { onMilestone, onStatus, onConnected };

  useEffect(() => {
    let key = 0;
    const push = (type: string, d: unknown) =>
      setItems((l) =>
        appendActivity(l, type, (d && typeof d === 'object' ? d : {}) as Record<string, any>, ++key),
      );
    const events: Record<string, (d: any) => void> = {};
    for (const t of TYPES)
      events[t] = (d) => {
        if (t === 'connected') {
          setState('live');
          handlers.current.onConnected();
        }
        push(t, d);
        if (t === 'milestone_updated') handlers.current.onMilestone();
        if (t === 'system' && d?.subtype === 'status' && typeof d.status === 'string')
          handlers.current.onStatus(d.status);
      };
    // The stream's own `error` events (a step's failure) are activity, not a connection state:
    // openStream keeps them apart from the EventSource's connection errors.
    events.error = (d) => push('error', d);
    const close = openStream(`/api/autonomous/workflows/${encodeURIComponent(workflowId)}/events/stream`, {
      events,
      onError: (_ev, readyState) => setState(readyState === EventSource.CLOSED ? 'closed' : 'reconnecting'),
      onOpen: () => setState('live'),
    });
    return close;
  }, [workflowId]);

  useEffect(() => {
    const el = listRef.current;
    if (el && follow.current) el.scrollTop = el.scrollHeight;
  }, [items]);

  return (
    <div>
      <p class="muted" role="status" aria-live="polite">
        Live activity: {STATE_WORDS[state]}
      </p>
      <ol
        ref={listRef}
        class="aw-feed"
        aria-label="Live activity"
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard
        tabIndex={0}
        onScroll={(e) => {
          const el = e.currentTarget;
          follow.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
        }}
      >
        {items.length === 0 && <li>Waiting for the agent…</li>}
        {items.map((it) => (
          <li key={it.key} data-type={it.type} class={it.type === 'error' ? 'aw-ev-error' : undefined}>
            {it.at && <time dateTime={it.at}>{formatTime(it.at).split(', ').pop()}</time>}
            <span class="aw-ev-type">
              {it.type.replace(/_/g, ' ')}
              {it.line ? ` · ${it.line}` : ''}
            </span>
            {it.text}
          </li>
        ))}
      </ol>
    </div>
  );
}
