// The navigation's unread-alerts badge, pure (test/unit/web-unread-alerts.test.ts). The count comes
// from GET /api/alerts/unread-count; a live alert from the SSE stream adds one at once (a replayed id
// after a reconnect adds nothing), and a recount asked for afterwards settles the exact figure, so a
// race between the count and the stream can only ever be off for a moment. Recounts are numbered: an
// answer older than the newest one applied is dropped (two recounts may cross on the wire).

export interface UnreadState {
  /** null until the first count arrives (no badge then). */
  count: number | null;
  /** Number of the newest recount whose answer was applied. */
  applied: number;
  /** Ids of live alerts already counted, newest last, at most SEEN_LIMIT. */
  seen: readonly number[];
}

export type UnreadAction =
  | { kind: 'counted'; count: number; request: number }
  | { kind: 'live'; id: number; read?: boolean };

export const SEEN_LIMIT = 500;

export const initialUnread: UnreadState = { count: null, applied: 0, seen: [] };

export function unreadReducer(s: UnreadState, action: UnreadAction): UnreadState {
  switch (action.kind) {
    case 'counted':
      if (action.request < s.applied) return s;
      return { ...s, count: Math.max(0, action.count), applied: action.request };
    case 'live': {
      if (s.seen.includes(action.id)) return s;
      const seen = [...s.seen, action.id].slice(-SEEN_LIMIT);
      const add = action.read ? 0 : 1;
      return { ...s, seen, count: s.count === null ? null : s.count + add };
    }
  }
}

/** What the badge shows: nothing at 0, the number up to 99, then "99+". */
export function badgeText(count: number | null, format: (n: number) => string = String): string | null {
  if (!count || count < 0) return null;
  return count > 99 ? '99+' : format(count);
}

/** The badge's accessible name, exact: "1 unread alert", "1,234 unread alerts". */
export function badgeLabel(count: number, format: (n: number) => string = String): string {
  return `${format(count)} unread alert${count === 1 ? '' : 's'}`;
}
