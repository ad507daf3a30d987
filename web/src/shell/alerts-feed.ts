// One alerts stream per browser and user, shared by every tab (test/unit/web-alerts-feed.test.ts).
// Each tab of the shell wants live alerts (the nav badge everywhere, the list on /alerts), but an
// EventSource per tab holds an HTTP/1.1 connection each, and browsers allow six per server: the
// seventh tab would hang. So the tabs elect one owner with the Web Locks API (the lock is handed to
// the next tab waiting when the owner closes); the owner opens GET /api/alerts/stream and passes each
// alert and the stream's state (live or not) to the other tabs over a BroadcastChannel. Lock and
// channel are named after the user, so a tab signed in as someone else never hears another user's
// alerts. A new tab says "hello" and the owner answers with the state. Without those APIs every tab
// opens its own stream (the old behaviour). A hand-over opens a fresh stream (no Last-Event-ID across
// tabs): listeners treat "live again" as "read again", which covers what was raised in between.

export interface LiveAlertEvent {
  id: number;
  read?: boolean;
  [k: string]: unknown;
}

export interface FeedListener {
  alert?: (a: LiveAlertEvent) => void;
  /** The shared stream is (again) live, or down. */
  state?: (live: boolean) => void;
}

/** A BroadcastChannel, reduced to what the feed uses. */
export interface ChannelLike {
  post(m: unknown): void;
  listen(fn: (data: unknown) => void): void;
  close(): void;
}

export interface FeedDeps {
  /** Web Locks: runs `hold` once this tab owns `name`, keeps it until the returned promise settles. */
  acquire: ((name: string, signal: AbortSignal, hold: () => Promise<void>) => Promise<unknown>) | null;
  channel: ((name: string) => ChannelLike) | null;
  /** Opens the SSE stream; returns its close function. */
  open: (h: { alert: (a: LiveAlertEvent) => void; open: () => void; error: () => void }) => () => void;
}

type Message =
  | { kind: 'alert'; alert: LiveAlertEvent }
  | { kind: 'state'; live: boolean }
  | { kind: 'hello' };

export interface AlertsFeed {
  subscribe(l: FeedListener): () => void;
  readonly live: boolean;
  /** Whether this tab holds the stream (for tests and diagnostics). */
  readonly owner: boolean;
}

export function createAlertsFeed(deps: FeedDeps, userKey: string): AlertsFeed {
  const listeners = new Set<FeedListener>();
  let live = false;
  let owner = false;
  let stop: (() => void) | null = null;

  const emitAlert = (a: LiveAlertEvent) => {
    for (const l of listeners) l.alert?.(a);
  };
  const setLive = (v: boolean) => {
    if (v === live) return;
    live = v;
    for (const l of listeners) l.state?.(v);
  };

  function start() {
    const { acquire, channel } = deps;
    if (!acquire || !channel) {
      stop = deps.open({ alert: emitAlert, open: () => setLive(true), error: () => setLive(false) });
      return;
    }
    const name = `svc-alerts-stream:${userKey}`;
    const ch = channel(name);
    const ctl = new AbortController();
    let closeStream = () => {};
    let release = () => {};
    const post = (m: Message) => ch.post(m);
    ch.listen((data) => {
      const m = data as Message;
      if (m?.kind === 'alert') emitAlert(m.alert);
      else if (m?.kind === 'state' && !owner) setLive(m.live);
      else if (m?.kind === 'hello' && owner) post({ kind: 'state', live });
    });
    post({ kind: 'hello' });
    acquire(
      name,
      ctl.signal,
      () =>
        new Promise<void>((resolve) => {
          owner = true;
          release = resolve;
          setLive(false);
          closeStream = deps.open({
            alert: (a) => {
              emitAlert(a);
              post({ kind: 'alert', alert: a });
            },
            open: () => {
              setLive(true);
              post({ kind: 'state', live: true });
            },
            error: () => {
              setLive(false);
              post({ kind: 'state', live: false });
            },
          });
        }),
    ).catch(() => {
      // Left the queue (AbortError) before owning the stream: nothing to undo.
    });
    stop = () => {
      ctl.abort();
      closeStream();
      if (owner) post({ kind: 'state', live: false });
      owner = false;
      release();
      ch.close();
    };
  }

  return {
    subscribe(l) {
      listeners.add(l);
      if (listeners.size === 1) start();
      else if (live) l.state?.(true);
      return () => {
        if (!listeners.delete(l) || listeners.size > 0) return;
        stop?.();
        stop = null;
        live = false;
      };
    },
    get live() {
      return live;
    },
    get owner() {
      return owner;
    },
  };
}
