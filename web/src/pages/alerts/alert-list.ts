// The alerts page's state, pure (test/unit/web-alerts-list.test.ts): the page of alerts, the total
// and the unread count, changed by live alerts from the SSE stream (a repeated id — replay after a
// reconnect — changes nothing; alerts outside the page's filter only count), marking read, marking all
// read and deleting.

export type Severity = 'info' | 'warning' | 'critical';

export interface Alert {
  id: number;
  alert_id: string;
  alert_type: string | null;
  severity: Severity;
  title: string;
  message: string | null;
  user_id: number | null;
  tenant_id: number | null;
  read: boolean;
  created_at: string;
}

/** The SSE `alert` event's data: an alert as stored, without the read flag (a new alert is unread). */
export type LiveAlert = Omit<Alert, 'read'> & { read?: boolean };

export interface AlertFilter {
  severity?: Severity | '';
  type?: string;
  unreadOnly?: boolean;
}

export interface AlertsState {
  alerts: Alert[];
  total: number;
  unread: number;
  /** Ids of live alerts seen, so a replayed one is not counted twice. */
  seen: ReadonlySet<number>;
  /** Ids that arrived live (not from a load): a load that started before they did must keep them. */
  live?: ReadonlySet<number>;
}

export type AlertsAction =
  | {
      kind: 'loaded';
      alerts: Alert[];
      total: number;
      unread: number;
      filter?: AlertFilter;
      onFirstPage?: boolean;
    }
  | { kind: 'live'; alert: LiveAlert; filter: AlertFilter; onFirstPage: boolean }
  | { kind: 'read'; alert_id: string }
  | { kind: 'read-all' }
  | { kind: 'removed'; alert_id: string };

export const initialAlerts: AlertsState = { alerts: [], total: 0, unread: 0, seen: new Set() };

export function matchesFilter(a: Pick<Alert, 'severity' | 'alert_type' | 'read'>, f: AlertFilter) {
  if (f.severity && a.severity !== f.severity) return false;
  if (f.type && a.alert_type !== f.type) return false;
  if (f.unreadOnly && a.read) return false;
  return true;
}

export function alertsReducer(s: AlertsState, action: AlertsAction): AlertsState {
  switch (action.kind) {
    case 'loaded': {
      // A live alert newer than everything loaded arrived while the load was in flight (its answer
      // was read before the alert was stored): keep it on the first page and in the counts.
      const newest = Math.max(0, ...action.alerts.map((a) => a.id));
      const missed =
        action.onFirstPage && action.filter
          ? s.alerts.filter(
              (a) => s.live?.has(a.id) && a.id > newest && matchesFilter(a, action.filter as AlertFilter),
            )
          : [];
      return {
        alerts: [...missed, ...action.alerts],
        total: action.total + missed.length,
        unread: action.unread + missed.filter((a) => !a.read).length,
        seen: new Set([...action.alerts, ...missed].map((a) => a.id)),
        live: s.live,
      };
    }
    case 'live': {
      const a: Alert = { ...action.alert, read: action.alert.read ?? false };
      if (s.seen.has(a.id) || s.alerts.some((x) => x.id === a.id)) return s;
      const seen = new Set(s.seen).add(a.id);
      const live = new Set(s.live).add(a.id);
      const unread = s.unread + (a.read ? 0 : 1);
      if (!matchesFilter(a, action.filter)) return { ...s, unread, seen, live };
      const alerts = action.onFirstPage
        ? [a, ...s.alerts].sort((x, y) =>
            x.created_at < y.created_at ? 1 : x.created_at > y.created_at ? -1 : y.id - x.id,
          )
        : s.alerts;
      return { alerts, total: s.total + 1, unread, seen, live };
    }
    case 'read': {
      const hit = s.alerts.find((a) => a.alert_id === action.alert_id);
      if (!hit || hit.read) return s;
      return {
        ...s,
        alerts: s.alerts.map((a) => (a === hit ? { ...a, read: true } : a)),
        unread: Math.max(0, s.unread - 1),
      };
    }
    case 'read-all':
      return { ...s, alerts: s.alerts.map((a) => (a.read ? a : { ...a, read: true })), unread: 0 };
    case 'removed': {
      const hit = s.alerts.find((a) => a.alert_id === action.alert_id);
      if (!hit) return s;
      return {
        ...s,
        alerts: s.alerts.filter((a) => a !== hit),
        total: Math.max(0, s.total - 1),
        unread: hit.read ? s.unread : Math.max(0, s.unread - 1),
      };
    }
  }
}

/**
 * Links from a content-filter alert to the messages it is about (issue 28 item 5). The alert's text
 * names them as `Messages: <date>/<tool>/<host>/<message id>, ...` (services/content-filter.ts); each
 * becomes the messages page filtered to that day, tool and host, where the message shows its verdict.
 */
export function flaggedMessageLinks(
  a: Pick<Alert, 'alert_type' | 'message'>,
): { href: string; label: string }[] {
  if (a.alert_type !== 'content_filter' || !a.message) return [];
  const list = /Messages: (.*)$/.exec(a.message)?.[1];
  if (!list) return [];
  const links: { href: string; label: string }[] = [];
  for (const ref of list.split(', ')) {
    const [date, tool, host, ...id] = ref.split('/');
    if (!date || !/^\d{4}-\d{2}-\d{2}$/.test(date) || !tool || !host || id.length === 0) continue;
    const qs = new URLSearchParams({ start_date: date, end_date: date, tool, host });
    links.push({ href: `/messages?${qs}`, label: `Message ${id.join('/')} (${tool}, ${date})` });
  }
  return links;
}
