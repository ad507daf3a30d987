// The navigation's unread badge state (web/src/shell/unread-alerts.ts): the count from the API, +1 for
// a live alert, a replayed id counted once, recount answers applied newest-first only, and what the
// badge shows and says.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  badgeLabel,
  badgeText,
  initialUnread,
  SEEN_LIMIT,
  type UnreadAction,
  unreadReducer,
} from '../../web/src/shell/unread-alerts.ts';

const run = (...actions: UnreadAction[]) => actions.reduce(unreadReducer, initialUnread);

test('the count is unknown until the API answers; live alerts before that do not invent one', () => {
  assert.equal(initialUnread.count, null);
  const s = run({ kind: 'live', id: 1 });
  assert.equal(s.count, null);
  assert.deepEqual(s.seen, [1]);
  assert.equal(run({ kind: 'counted', count: 3, request: 1 }).count, 3);
});

test('a live alert adds one at once; its replay after a reconnect adds nothing; a read one adds nothing', () => {
  const s = run(
    { kind: 'counted', count: 2, request: 1 },
    { kind: 'live', id: 10 },
    { kind: 'live', id: 11 },
    { kind: 'live', id: 10 },
    { kind: 'live', id: 12, read: true },
  );
  assert.equal(s.count, 4);
});

test('the recount settles the figure; an older answer arriving late is dropped', () => {
  const s = run(
    { kind: 'counted', count: 1, request: 1 },
    { kind: 'live', id: 5 },
    { kind: 'counted', count: 2, request: 3 },
    { kind: 'counted', count: 7, request: 2 },
  );
  assert.equal(s.count, 2);
  assert.equal(s.applied, 3);
  // The same request number again (a retry of the newest) still applies.
  assert.equal(unreadReducer(s, { kind: 'counted', count: 0, request: 3 }).count, 0);
  assert.equal(unreadReducer(s, { kind: 'counted', count: -4, request: 4 }).count, 0, 'never negative');
});

test('the seen ids are bounded', () => {
  let s = run({ kind: 'counted', count: 0, request: 1 });
  for (let id = 1; id <= SEEN_LIMIT + 10; id++) s = unreadReducer(s, { kind: 'live', id });
  assert.equal(s.seen.length, SEEN_LIMIT);
  assert.equal(s.seen[0], 11);
  assert.equal(s.count, SEEN_LIMIT + 10);
});

test('badge text: nothing at 0 or unknown, the number up to 99, then 99+; the label is exact', () => {
  assert.equal(badgeText(null), null);
  assert.equal(badgeText(0), null);
  assert.equal(badgeText(1), '1');
  assert.equal(badgeText(99), '99');
  assert.equal(badgeText(100), '99+');
  const grouped = (n: number) => new Intl.NumberFormat('en-US').format(n);
  assert.equal(badgeLabel(1), '1 unread alert');
  assert.equal(badgeLabel(2), '2 unread alerts');
  assert.equal(badgeLabel(1234, grouped), '1,234 unread alerts');
});
