// Alerts (issue 14 item 2; spec document 2 "Alerts", "Events" 1): the caller's alerts, filtered by
// severity, type and unread, 50 a page, live through GET /api/alerts/stream (SSE, the shell's one
// stream shared by all tabs: a new alert appears at the top without a reload; the browser's
// EventSource reconnects with Last-Event-ID and a replayed alert is not shown twice), the unread
// count as a badge by the heading (the shell's nav badge, shell/unread-alerts-badge.tsx, is told to
// recount after every change made here), mark read, mark all read and delete, and the caller's
// notification preferences (./preferences.tsx) in a disclosure.
import { useEffect, useReducer, useRef, useState } from 'preact/hooks';
import { api } from '../../api/client.ts';
import { useUnreadAlerts } from '../../shell/unread-alerts-badge.tsx';
import { Button, ErrorBox, Field, formatNumber, formatTime, Loading } from '../../ui/index.ts';
import { Pager } from '../../ui/pager.tsx';
import { SelectField } from '../../ui/select-field.tsx';
import {
  type Alert,
  type AlertFilter,
  alertsReducer,
  flaggedMessageLinks,
  initialAlerts,
  type LiveAlert,
  type Severity,
} from './alert-list.ts';
import { AlertPreferences } from './preferences.tsx';
import './alerts.css';

const PAGE_SIZE = 50;
const SEVERITIES = [
  { value: '', label: 'Any' },
  { value: 'critical', label: 'Critical' },
  { value: 'warning', label: 'Warning' },
  { value: 'info', label: 'Info' },
];

export default function Alerts() {
  const [state, dispatch] = useReducer(alertsReducer, initialAlerts);
  const [severity, setSeverity] = useState<Severity | ''>('');
  const [type, setType] = useState('');
  const [typeInput, setTypeInput] = useState('');
  const [unreadOnly, setUnreadOnly] = useState(false);
  const [offset, setOffset] = useState(0);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<unknown>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const [live, setLive] = useState<'connecting' | 'live' | 'reconnecting'>('connecting');
  const [tick, setTick] = useState(0);
  const { recount, subscribe } = useUnreadAlerts();
  const [prefsOpen, setPrefsOpen] = useState(false);
  const filter: AlertFilter = { severity, type, unreadOnly };
  const viewRef = useRef({ filter, offset });
  viewRef.current = { filter, offset };

  useEffect(() => {
    const ctl = new AbortController();
    setLoading(true);
    setError(null);
    Promise.all([
      api.get<{ alerts: Alert[]; total: number }>('/api/alerts', {
        query: { severity, type, unread_only: unreadOnly ? 'true' : undefined, limit: PAGE_SIZE, offset },
        signal: ctl.signal,
      }),
      api.get<{ unread_count: number }>('/api/alerts/unread-count', { signal: ctl.signal }),
    ]).then(
      ([list, count]) => {
        dispatch({
          kind: 'loaded',
          alerts: list.alerts,
          total: list.total,
          unread: count.unread_count,
          filter: { severity, type, unreadOnly },
          onFirstPage: offset === 0,
        });
        setLoading(false);
      },
      (err) => {
        if (ctl.signal.aborted) return;
        setError(err);
        setLoading(false);
      },
    );
    return () => ctl.abort();
  }, [severity, type, unreadOnly, offset, tick]);

  // The shell's shared alerts stream (one per browser and user, shell/alerts-feed.ts). Live again
  // after a drop or a hand-over between tabs: the page is read again, so nothing raised in between is
  // missing (a replayed alert changes nothing: the reducer knows its id).
  useEffect(() => {
    let wasLive = false;
    return subscribe({
      alert: (data) =>
        dispatch({
          kind: 'live',
          alert: data as unknown as LiveAlert,
          filter: viewRef.current.filter,
          onFirstPage: viewRef.current.offset === 0,
        }),
      state: (on) => {
        if (!on) {
          setLive(wasLive ? 'reconnecting' : 'connecting');
          return;
        }
        if (wasLive) setTick((t) => t + 1);
        wasLive = true;
        setLive('live');
      },
    });
  }, [subscribe]);

  const act = async (run: () => Promise<void>) => {
    setActionError(null);
    try {
      await run();
    } catch (err) {
      setActionError(err);
    } finally {
      recount();
    }
  };
  const markRead = (a: Alert) =>
    act(async () => {
      await api.post(`/api/alerts/${encodeURIComponent(a.alert_id)}/read`);
      dispatch({ kind: 'read', alert_id: a.alert_id });
    });
  const remove = (a: Alert) =>
    act(async () => {
      if (!window.confirm(`Delete the alert “${a.title}”?`)) return;
      await api.del(`/api/alerts/${encodeURIComponent(a.alert_id)}`);
      dispatch({ kind: 'removed', alert_id: a.alert_id });
    });
  const readAll = () =>
    act(async () => {
      await api.post('/api/alerts/read-all');
      dispatch({ kind: 'read-all' });
    });

  return (
    <section>
      <div class="alerts-head">
        <h1>Alerts</h1>
        <span class={`badge${state.unread ? ' badge-on' : ''}`} data-unread={state.unread} role="status">
          {formatNumber(state.unread)} unread
        </span>
        <span class={`live live-${live}`}>
          {live === 'live' ? 'Live' : live === 'connecting' ? 'Connecting…' : 'Reconnecting…'}
        </span>
      </div>
      <details
        class="alert-preferences-box"
        onToggle={(e) => setPrefsOpen((e.currentTarget as HTMLDetailsElement).open)}
      >
        <summary>Notification preferences</summary>
        {/* Read from the API only once opened. */}
        {prefsOpen && (
          <AlertPreferences
            onSaved={() => {
              setTick((t) => t + 1);
              recount();
            }}
          />
        )}
      </details>
      <form
        class="alert-filters"
        aria-label="Filter alerts"
        onSubmit={(e) => {
          e.preventDefault();
          setOffset(0);
          setType(typeInput.trim());
        }}
      >
        <SelectField
          label="Severity"
          value={severity}
          options={SEVERITIES}
          onValue={(v) => {
            setOffset(0);
            setSeverity(v as Severity | '');
          }}
        />
        <Field label="Type" value={typeInput} onValue={setTypeInput} hint="Press Enter to apply" />
        <label class="check">
          <input
            type="checkbox"
            checked={unreadOnly}
            onChange={(e) => {
              setOffset(0);
              setUnreadOnly(e.currentTarget.checked);
            }}
          />{' '}
          Unread only
        </label>
        <Button onClick={readAll} disabled={state.unread === 0}>
          Mark all read
        </Button>
      </form>
      <ErrorBox error={actionError} />
      <ErrorBox error={error} />
      {loading && state.alerts.length === 0 && !error && <Loading />}
      {!loading && !error && state.alerts.length === 0 && <p class="muted">No alerts.</p>}
      <ul class="alert-list" aria-label="Alerts, newest first">
        {state.alerts.map((a) => (
          <li
            key={a.id}
            class={`alert alert-${a.severity}${a.read ? ' alert-read' : ''}`}
            data-alert-id={a.alert_id}
          >
            <div class="alert-main">
              <div class="alert-title">
                <span class="severity">{a.severity}</span> <strong>{a.title}</strong>
                {!a.read && <span class="new">new</span>}
              </div>
              {a.message && <p class="alert-message">{a.message}</p>}
              {flaggedMessageLinks(a).length > 0 && (
                <ul class="alert-links" aria-label="Flagged messages">
                  {flaggedMessageLinks(a).map((l) => (
                    <li key={l.href + l.label}>
                      <a href={l.href}>{l.label}</a>
                    </li>
                  ))}
                </ul>
              )}
              <div class="muted alert-meta">
                {formatTime(a.created_at)}
                {a.alert_type && ` · ${a.alert_type}`}
              </div>
            </div>
            <div class="alert-actions">
              {!a.read && (
                <Button onClick={() => markRead(a)} aria-label={`Mark “${a.title}” read`}>
                  Mark read
                </Button>
              )}
              <Button variant="link" onClick={() => remove(a)} aria-label={`Delete “${a.title}”`}>
                Delete
              </Button>
            </div>
          </li>
        ))}
      </ul>
      <Pager offset={offset} total={state.total} pageSize={PAGE_SIZE} onOffset={setOffset} />
      {error != null && <Button onClick={() => setTick((t) => t + 1)}>Try again</Button>}
    </section>
  );
}
