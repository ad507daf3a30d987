// The proxy's call-context cache (services/proxy/call-context-cache.ts) as a data structure: LRU
// bound, TTL, scoped invalidation, the generation rule (a read that raced an invalidation is never
// stored) and the LISTEN state (nothing cached while the PostgreSQL listener is down).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ProxyCallContext } from '../../db/repositories/proxy-tokens.ts';
import { ProxyContextCache } from '../../services/proxy/call-context-cache.ts';

function ctx(sessionId: string, userId = 1, tenantId: number | null = 1): ProxyCallContext {
  return {
    sessionId,
    userId,
    tenantId,
    provider: 'openai',
    expiresAt: new Date(Date.now() + 3_600_000),
    revokedAt: null,
    sessionStatus: 'active',
    toolName: 'cli_alpha',
    hostName: 'h',
    userActive: true,
    userDeleted: false,
    username: 'u',
    tenantName: 't',
    tenantStatus: 'active',
    tenantDeletedAt: null,
    key: { id: 1, encryptedKey: 'gAAAA-ciphertext', baseUrl: null, createdBySystemAdmin: true },
  };
}

test('least recently used entries leave first when the bound is reached', () => {
  const c = new ProxyContextCache(2, 60_000, false);
  c.set('a', ctx('s1'), c.generation);
  c.set('b', ctx('s2'), c.generation);
  assert.ok(c.get('a')); // a is now the most recent
  c.set('c', ctx('s3'), c.generation);
  assert.equal(c.get('b'), undefined, 'b was the least recently used');
  assert.ok(c.get('a'));
  assert.ok(c.get('c'));
  assert.equal(c.stats().size, 2);
});

test('an entry older than the TTL is read again', async () => {
  const c = new ProxyContextCache(10, 30, false);
  c.set('a', ctx('s1'), c.generation);
  assert.ok(c.get('a'));
  await new Promise((r) => setTimeout(r, 45));
  assert.equal(c.get('a'), undefined);
});

test('invalidation by session, user and tenant drops exactly the matching entries', () => {
  const c = new ProxyContextCache(10, 60_000, false);
  c.set('a', ctx('s1', 1, 1), c.generation);
  c.set('b', ctx('s2', 2, 1), c.generation);
  c.set('c', ctx('s3', 3, 2), c.generation);
  c.set('d', ctx('s4', 4, null), c.generation);
  c.drop({ sessionId: 's1' });
  assert.equal(c.get('a'), undefined);
  assert.ok(c.get('b'));
  c.drop({ userId: 2 });
  assert.equal(c.get('b'), undefined);
  assert.ok(c.get('c'));
  c.drop({ tenantId: 2 });
  assert.equal(c.get('c'), undefined);
  assert.ok(c.get('d'));
  c.drop('all');
  assert.equal(c.get('d'), undefined);
});

test('a read that started before an invalidation is not stored', () => {
  const c = new ProxyContextCache(10, 60_000, false);
  const readAt = c.generation;
  c.drop({ sessionId: 'other' }); // a revocation commits while the read is in flight
  c.set('a', ctx('s1'), readAt);
  assert.equal(c.get('a'), undefined);
  c.set('a', ctx('s1'), c.generation);
  assert.ok(c.get('a'));
});

test('nothing is cached until the listener is up, and everything is cleared when it drops', async () => {
  const c = new ProxyContextCache(10, 60_000, true);
  c.set('a', ctx('s1'), c.generation);
  assert.equal(c.get('a'), undefined, 'off before the first LISTEN');
  let ready = false;
  const waiting = c.ready().then(() => {
    ready = true;
  });
  c.setListening(true);
  await waiting;
  assert.ok(ready);
  c.set('a', ctx('s1'), c.generation);
  assert.ok(c.get('a'));
  c.setListening(false);
  assert.equal(c.get('a'), undefined);
  c.set('b', ctx('s2'), c.generation);
  assert.equal(c.get('b'), undefined, 'off while the listener is down');
  c.setListening(true);
  assert.equal(c.get('a'), undefined, 'cleared on reconnect');
});

test('size 0 turns the cache off', () => {
  const c = new ProxyContextCache(0, 60_000, false);
  c.set('a', ctx('s1'), c.generation);
  assert.equal(c.get('a'), undefined);
});
