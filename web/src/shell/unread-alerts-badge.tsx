// The unread-alerts count every page of the shell shares: one provider (mounted by the shell only
// for a signed-in user with no pending password change) reads GET /api/alerts/unread-count, follows
// the alerts stream (./alerts-feed.ts: one GET /api/alerts/stream per browser and user, shared by the
// tabs; a new alert: +1 at once, then a recount), recounts when the stream is live again, when the tab
// becomes visible again and when a page says it changed something (useUnreadAlerts().recount() after
// mark read, read all or delete). Pages that want the live alerts themselves (/alerts) subscribe to
// the same feed (useUnreadAlerts().subscribe) instead of opening a stream of their own. The badge sits
// on the "Alerts" nav link with the exact count as its accessible name. State rules: ./unread-alerts.ts.
import { type ComponentChildren, createContext } from 'preact';
import { useCallback, useContext, useEffect, useMemo, useReducer, useRef } from 'preact/hooks';
import { api, openStream } from '../api/client.ts';
import { useAuth } from '../auth/session.tsx';
import { formatNumber } from '../ui/format.ts';
import { type AlertsFeed, createAlertsFeed, type FeedDeps, type FeedListener } from './alerts-feed.ts';
import { badgeLabel, badgeText, initialUnread, unreadReducer } from './unread-alerts.ts';
import './shell.css';

/** How long after a live alert the exact count is read again (a burst costs one read). */
const RECOUNT_DELAY_MS = 400;

interface UnreadAlerts {
  count: number | null;
  recount: () => void;
  /** Live alerts and the stream's state; returns the unsubscribe function. */
  subscribe: (l: FeedListener) => () => void;
}

const UnreadContext = createContext<UnreadAlerts>({
  count: null,
  recount: () => {},
  subscribe: () => () => {},
});

const browserFeedDeps = (): FeedDeps => ({
  acquire:
    typeof navigator !== 'undefined' && navigator.locks
      ? (name, signal, hold) => navigator.locks.request(name, { signal }, hold)
      : null,
  channel:
    typeof BroadcastChannel !== 'undefined'
      ? (name) => {
          const bc = new BroadcastChannel(name);
          return {
            post: (m) => bc.postMessage(m),
            listen: (fn) => {
              bc.onmessage = (ev) => fn(ev.data);
            },
            close: () => {
              bc.onmessage = null;
              bc.close();
            },
          };
        }
      : null,
  open: (h) =>
    openStream('/api/alerts/stream', { events: { alert: h.alert }, onOpen: h.open, onError: h.error }),
});

export const useUnreadAlerts = () => useContext(UnreadContext);

export function UnreadAlertsProvider({ children }: { children: ComponentChildren }) {
  const [state, dispatch] = useReducer(unreadReducer, initialUnread);
  const requests = useRef(0);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);

  const recount = useCallback(() => {
    const request = ++requests.current;
    api.get<{ unread_count: number }>('/api/alerts/unread-count').then(
      (r) => dispatch({ kind: 'counted', count: r.unread_count, request }),
      // The badge keeps its last figure; the next live alert or focus tries again.
      () => {},
    );
  }, []);

  const { user } = useAuth();
  const userKey = String(user?.id ?? '');
  const feed = useMemo<AlertsFeed>(() => createAlertsFeed(browserFeedDeps(), userKey), [userKey]);

  useEffect(() => {
    recount();
    const unsubscribe = feed.subscribe({
      alert: (a) => {
        if (typeof a?.id !== 'number') return;
        dispatch({ kind: 'live', id: a.id, read: a.read });
        clearTimeout(timer.current);
        timer.current = setTimeout(recount, RECOUNT_DELAY_MS);
      },
      // Alerts raised while the stream was down are in the count, not in any replay.
      state: (live) => {
        if (live) recount();
      },
    });
    const onVisible = () => {
      if (document.visibilityState === 'visible') recount();
    };
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      unsubscribe();
      clearTimeout(timer.current);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, [recount, feed]);

  const value = useMemo(
    () => ({ count: state.count, recount, subscribe: feed.subscribe }),
    [state.count, recount, feed],
  );
  return <UnreadContext.Provider value={value}>{children}</UnreadContext.Provider>;
}

/** The badge itself; renders nothing while the count is unknown or 0. */
export function UnreadAlertsBadge() {
  const { count } = useUnreadAlerts();
  const text = badgeText(count, (n) => formatNumber(n));
  if (text === null || count === null) return null;
  return (
    <span class="nav-badge" role="status" aria-label={badgeLabel(count, (n) => formatNumber(n))}>
      {text}
    </span>
  );
}
