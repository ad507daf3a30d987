// The alerts stream shared by the tabs (web/src/shell/alerts-feed.ts), with Node's real
// BroadcastChannel between "tabs" (feeds in one process) and a lock manager that behaves like the Web
// Locks API (one holder per name, a FIFO queue, abort leaves the queue): one stream for all tabs of a
// user, alerts and state reach every tab, the next tab takes over when the owner goes, another user's
// tabs never share, and without the APIs each tab opens its own stream.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type ChannelLike,
  createAlertsFeed,
  type FeedDeps,
  type LiveAlertEvent,
} from '../../web/src/shell/alerts-feed.ts';

const tick = () => new Promise((r) => setTimeout(r, 30));

function lockManager() {
  type Entry = { hold: () => Promise<void>; resolve: () => void; reject: (e: Error) => void };
  const queues = new Map<string, Entry[]>();
  const held = new Set<string>();
  const pump = (name: string) => {
    if (held.has(name)) return;
    const e = queues.get(name)?.shift();
    if (!e) return;
    held.add(name);
    e.hold().then(() => {
      held.delete(name);
      e.resolve();
      pump(name);
    });
  };
  return (name: string, signal: AbortSignal, hold: () => Promise<void>) =>
    new Promise<unknown>((resolve, reject) => {
      const entry: Entry = { hold, resolve: () => resolve(undefined), reject };
      const q = queues.get(name) ?? [];
      queues.set(name, q);
      q.push(entry);
      signal.addEventListener('abort', () => {
        const i = q.indexOf(entry);
        if (i >= 0) {
          q.splice(i, 1);
          reject(Object.assign(new Error('aborted'), { name: 'AbortError' }));
        }
      });
      pump(name);
    });
}

const channel = (name: string): ChannelLike => {
  const bc = new BroadcastChannel(name);
  return {
    post: (m) => bc.postMessage(m),
    listen: (fn) => {
      bc.onmessage = (ev) => fn((ev as MessageEvent).data);
    },
    close: () => bc.close(),
  };
};

/** A fake server side: every stream opened, with a way to push an alert or open it. */
function streams() {
  const open: { user: string; h: Parameters<FeedDeps['open']>[0]; closed: boolean }[] = [];
  const depsFor = (user: string, acquire: FeedDeps['acquire'] | null, withChannel = true): FeedDeps => ({
    acquire,
    channel: withChannel ? channel : null,
    open: (h) => {
      const s = { user, h, closed: false };
      open.push(s);
      return () => {
        s.closed = true;
      };
    },
  });
  const live = () => open.filter((s) => !s.closed);
  return { open, live, depsFor };
}

const alert = (id: number): LiveAlertEvent => ({ id, title: `A${id}` });

test('two tabs of one user share one stream; alerts and the live state reach both', async () => {
  const srv = streams();
  const locks = lockManager();
  const a = createAlertsFeed(srv.depsFor('7', locks), '7');
  const b = createAlertsFeed(srv.depsFor('7', locks), '7');
  const seen = { a: [] as number[], b: [] as number[] };
  const states: boolean[] = [];
  const offA = a.subscribe({ alert: (x) => seen.a.push(x.id) });
  await tick();
  const offB = b.subscribe({ alert: (x) => seen.b.push(x.id), state: (v) => states.push(v) });
  await tick();
  assert.equal(srv.open.length, 1, 'one stream for the two tabs');
  assert.equal(a.owner, true);
  assert.equal(b.owner, false);
  srv.live()[0]!.h.open();
  await tick();
  assert.equal(a.live, true);
  assert.equal(b.live, true);
  assert.deepEqual(states, [true]);
  srv.live()[0]!.h.alert(alert(1));
  srv.live()[0]!.h.alert(alert(2));
  await tick();
  assert.deepEqual(seen.a, [1, 2]);
  assert.deepEqual(seen.b, [1, 2]);
  // A third tab opened later learns the stream is live by saying hello.
  const c = createAlertsFeed(srv.depsFor('7', locks), '7');
  const cStates: boolean[] = [];
  const offC = c.subscribe({ state: (v) => cStates.push(v) });
  await tick();
  assert.deepEqual(cStates, [true]);
  assert.equal(srv.open.length, 1);
  offA();
  offB();
  offC();
  await tick();
});

test('when the owning tab goes, the next tab opens the stream and says when it is live', async () => {
  const srv = streams();
  const locks = lockManager();
  const a = createAlertsFeed(srv.depsFor('7', locks), '7');
  const b = createAlertsFeed(srv.depsFor('7', locks), '7');
  const offA = a.subscribe({});
  await tick();
  const states: boolean[] = [];
  const got: number[] = [];
  const offB = b.subscribe({ state: (v) => states.push(v), alert: (x) => got.push(x.id) });
  srv.live()[0]!.h.open();
  await tick();
  offA();
  await tick();
  assert.equal(srv.open[0]!.closed, true, 'the owner closed its stream');
  assert.equal(b.owner, true);
  assert.equal(srv.live().length, 1);
  srv.live()[0]!.h.open();
  srv.live()[0]!.h.alert(alert(3));
  await tick();
  assert.deepEqual(states, [true, false, true], 'down at the hand-over, live again on the new stream');
  assert.deepEqual(got, [3]);
  offB();
  await tick();
  assert.equal(srv.live().length, 0, 'the last tab closes the stream');
});

test('another user’s tabs get a stream of their own and never hear this user’s alerts', async () => {
  const srv = streams();
  const locks = lockManager();
  const mine = createAlertsFeed(srv.depsFor('7', locks), '7');
  const theirs = createAlertsFeed(srv.depsFor('8', locks), '8');
  const heard: number[] = [];
  const off1 = mine.subscribe({});
  const off2 = theirs.subscribe({ alert: (x) => heard.push(x.id) });
  await tick();
  assert.deepEqual(
    srv
      .live()
      .map((s) => s.user)
      .sort(),
    ['7', '8'],
  );
  srv
    .live()
    .find((s) => s.user === '7')!
    .h.alert(alert(9));
  await tick();
  assert.deepEqual(heard, []);
  off1();
  off2();
  await tick();
});

test('without Web Locks or BroadcastChannel each tab opens its own stream; a second listener in a tab shares it', async () => {
  const srv = streams();
  const a = createAlertsFeed(srv.depsFor('7', null), '7');
  const b = createAlertsFeed(srv.depsFor('7', lockManager(), false), '7');
  const got: number[] = [];
  const offA1 = a.subscribe({ alert: (x) => got.push(x.id) });
  const offB = b.subscribe({});
  assert.equal(srv.open.length, 2);
  srv.open[0]!.h.open();
  const late: boolean[] = [];
  const offA2 = a.subscribe({ state: (v) => late.push(v), alert: (x) => got.push(x.id * 10) });
  assert.deepEqual(late, [true], 'a listener joining a live stream is told at once');
  assert.equal(srv.open.length, 2, 'no second stream in the same tab');
  srv.open[0]!.h.alert(alert(4));
  assert.deepEqual(got, [4, 40]);
  offA1();
  assert.equal(srv.open[0]!.closed, false, 'still one listener');
  offA2();
  offB();
  assert.equal(srv.live().length, 0);
});
