// The invalidated cache's own rules (db/invalidated-cache.ts: the session cache and the proxy's
// call-context cache are both one of it), without a database: a read that raced an invalidation is
// never stored, invalidations drop exactly their scope (login session, remote session, user, tenant,
// all), the LRU bound and the TTL hold, and a cache that needs a LISTEN connection caches nothing
// without one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidatedCache as AuthSessionCache } from '../../db/invalidated-cache.ts';

const facts = (sessionId: number, userId: number, tenantId: number | null) => ({
  authSessionId: sessionId,
  remoteSessionId: `r${sessionId}`,
  userId,
  tenantId,
});

test('a read that started before an invalidation is not stored (the write may have committed after it)', () => {
  const c = new AuthSessionCache<string>(10, 60_000, false);
  const gen = c.generation;
  c.drop({ userId: 99 }); // any invalidation, even of another user, bumps the generation
  c.set('k', 'old facts', facts(1, 1, 1), gen);
  assert.equal(c.get('k'), undefined);
  c.set('k', 'fresh facts', facts(1, 1, 1), c.generation);
  assert.equal(c.get('k'), 'fresh facts');
});

test('invalidations drop exactly their scope: one session, one user, one tenant, everything', () => {
  const c = new AuthSessionCache<string>(10, 60_000, false);
  const fill = () => {
    const g = c.generation;
    c.set('s1', 'a', facts(1, 10, 100), g);
    c.set('s2', 'b', facts(2, 10, 100), g);
    c.set('s3', 'c', facts(3, 11, 100), g);
    c.set('s4', 'd', facts(4, 12, 200), g);
    c.set('s5', 'e', facts(5, 13, null), g);
  };
  const present = () => ['s1', 's2', 's3', 's4', 's5'].filter((k) => c.get(k) !== undefined);
  fill();
  c.drop({ authSessionId: 2 });
  assert.deepEqual(present(), ['s1', 's3', 's4', 's5']);
  fill();
  c.drop({ remoteSessionId: 'r3' });
  assert.deepEqual(present(), ['s1', 's2', 's4', 's5']);
  fill();
  c.drop({ remoteSessionId: '2' }); // never equal to a login session's number
  c.drop({ authSessionId: 99 });
  assert.deepEqual(present(), ['s1', 's2', 's3', 's4', 's5']);
  fill();
  c.drop({ userId: 10 });
  assert.deepEqual(present(), ['s3', 's4', 's5']);
  fill();
  c.drop({ tenantId: 100 });
  assert.deepEqual(present(), ['s4', 's5']);
  fill();
  c.drop('all');
  assert.deepEqual(present(), []);
});

test('bounded: the least recently used entry goes first', () => {
  const c = new AuthSessionCache<number>(3, 60_000, false);
  for (let i = 1; i <= 3; i++) c.set(`k${i}`, i, facts(i, i, null), c.generation);
  assert.equal(c.get('k1'), 1); // k1 is now the most recent
  c.set('k4', 4, facts(4, 4, null), c.generation);
  assert.equal(c.stats().size, 3);
  assert.equal(c.get('k2'), undefined);
  assert.deepEqual(
    ['k1', 'k3', 'k4'].map((k) => c.get(k)),
    [1, 3, 4],
  );
  for (let i = 0; i < 1000; i++) c.set(`x${i}`, i, facts(i, i, null), c.generation);
  assert.equal(c.stats().size, 3);
});

test('entries older than the TTL are not served', async () => {
  const c = new AuthSessionCache<string>(10, 30, false);
  c.set('k', 'v', facts(1, 1, 1), c.generation);
  assert.equal(c.get('k'), 'v');
  await new Promise((r) => setTimeout(r, 40));
  assert.equal(c.get('k'), undefined);
  assert.equal(c.stats().size, 0);
});

test('a cache that needs LISTEN is off until connected, cleared on every drop and reconnect', async () => {
  const c = new AuthSessionCache<string>(10, 60_000, true);
  c.set('k', 'v', facts(1, 1, 1), c.generation);
  assert.equal(c.get('k'), undefined);
  let ready = false;
  const r = c.ready().then(() => {
    ready = true;
  });
  await Promise.resolve();
  assert.equal(ready, false);
  c.setListening(true);
  await r;
  c.set('k', 'v', facts(1, 1, 1), c.generation);
  assert.equal(c.get('k'), 'v');
  const gen = c.generation;
  c.setListening(false);
  assert.equal(c.stats().size, 0);
  assert.equal(c.stats().usable, false);
  c.set('k', 'v', facts(1, 1, 1), c.generation);
  assert.equal(c.get('k'), undefined);
  c.setListening(true);
  // A read begun before the drop is not stored after the reconnect either.
  c.set('k', 'v', facts(1, 1, 1), gen);
  assert.equal(c.get('k'), undefined);
});

test('size 0 is off', () => {
  const c = new AuthSessionCache<string>(0, 60_000, false);
  c.set('k', 'v', facts(1, 1, 1), c.generation);
  assert.equal(c.get('k'), undefined);
  assert.equal(c.stats().size, 0);
});
