import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  PROXY_TOKEN_PREFIX,
  type ProxyTokenClaims,
  proxyTokenTtlSeconds,
  signProxyToken,
  verifyProxyTokenSignature,
} from '../../domain/crypto/proxy-token.ts';

const SECRET = 'proxy-token-test-secret';
const NOW = 1_700_000_000;

function claims(overrides: Partial<ProxyTokenClaims> = {}): ProxyTokenClaims {
  return {
    jti: 'a3b1c2d4-0000-4000-8000-000000000001',
    sid: '5f0c7d2e-1111-4111-8111-111111111111',
    uid: 42,
    tid: 7,
    prv: 'openai',
    iat: NOW,
    exp: NOW + 3600,
    typ: 'general',
    ...overrides,
  };
}

/** Signs an arbitrary payload string the way the module does, to build structurally odd tokens. */
function forge(payloadJson: string, secret = SECRET): string {
  const signed = PROXY_TOKEN_PREFIX + Buffer.from(payloadJson).toString('base64url');
  return `${signed}.${createHmac('sha256', secret).update(signed).digest('base64url')}`;
}

describe('signProxyToken / verifyProxyTokenSignature', () => {
  it('round-trips the claims', () => {
    const token = signProxyToken(claims(), SECRET);
    assert.ok(token.startsWith('svcpt_'));
    assert.deepEqual(verifyProxyTokenSignature(token, SECRET, NOW + 10), { ok: true, claims: claims() });
  });

  it('accepts a null tenant', () => {
    const result = verifyProxyTokenSignature(signProxyToken(claims({ tid: null }), SECRET), SECRET, NOW);
    assert.equal(result.ok && result.claims.tid, null);
  });

  it('drops unknown claim fields when signing', () => {
    const withExtra = { ...claims(), secret: 'x' } as ProxyTokenClaims;
    const payload = signProxyToken(withExtra, SECRET).slice(PROXY_TOKEN_PREFIX.length).split('.')[0];
    assert.ok(!Buffer.from(payload, 'base64url').toString().includes('secret'));
  });

  it('reports expired at and after exp, valid just before', () => {
    const token = signProxyToken(claims(), SECRET);
    assert.equal(verifyProxyTokenSignature(token, SECRET, NOW + 3599).ok, true);
    assert.deepEqual(verifyProxyTokenSignature(token, SECRET, NOW + 3600), { ok: false, reason: 'expired' });
    assert.deepEqual(verifyProxyTokenSignature(token, SECRET, NOW + 99999), { ok: false, reason: 'expired' });
  });

  it('rejects a token signed with another secret', () => {
    const token = signProxyToken(claims(), 'other-secret');
    assert.deepEqual(verifyProxyTokenSignature(token, SECRET, NOW), { ok: false, reason: 'bad_signature' });
  });

  it('rejects altered claims (privilege change) as a bad signature', () => {
    const token = signProxyToken(claims(), SECRET);
    const sig = token.split('.')[1];
    const altered = Buffer.from(JSON.stringify({ ...claims(), uid: 1, exp: NOW + 10 ** 7 })).toString(
      'base64url',
    );
    const result = verifyProxyTokenSignature(`${PROXY_TOKEN_PREFIX}${altered}.${sig}`, SECRET, NOW);
    assert.deepEqual(result, { ok: false, reason: 'bad_signature' });
  });

  it('rejects a flipped signature character', () => {
    const token = signProxyToken(claims(), SECRET);
    const flipped = token.slice(0, -2) + (token.at(-2) === 'A' ? 'B' : 'A') + token.at(-1);
    assert.deepEqual(verifyProxyTokenSignature(flipped, SECRET, NOW), { ok: false, reason: 'bad_signature' });
  });

  it('rejects a non-canonical spelling of the same signature bytes', () => {
    const token = signProxyToken(claims(), SECRET);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    // The last of 43 characters carries 4 signature bits and 2 unused bits; setting an unused bit
    // changes the text but not the decoded bytes.
    const lastValue = alphabet.indexOf(token.at(-1)!);
    const respelled = token.slice(0, -1) + alphabet[lastValue ^ 0b01];
    const sig = (t: string) => Buffer.from(t.split('.')[1], 'base64url');
    assert.deepEqual(sig(respelled), sig(token));
    assert.deepEqual(verifyProxyTokenSignature(respelled, SECRET, NOW), {
      ok: false,
      reason: 'bad_signature',
    });
  });

  it('rejects malformed tokens', () => {
    const token = signProxyToken(claims(), SECRET);
    const cases = [
      '',
      'Bearer xyz',
      token.replace(PROXY_TOKEN_PREFIX, 'other_'),
      token.split('.')[0],
      `${token}.extra`,
      `${PROXY_TOKEN_PREFIX}!!!.${token.split('.')[1]}`,
      `${token}${'A'.repeat(5000)}`,
    ];
    for (const bad of cases) {
      assert.deepEqual(verifyProxyTokenSignature(bad, SECRET, NOW), { ok: false, reason: 'malformed' }, bad);
    }
  });

  it('rejects correctly signed payloads with invalid claims as malformed', () => {
    const bad = [
      'not json',
      '[]',
      JSON.stringify({ ...claims(), uid: '42' }),
      JSON.stringify({ ...claims(), jti: '' }),
      JSON.stringify({ ...claims(), exp: NOW - 1 }),
      JSON.stringify({ ...claims(), tid: undefined }),
    ];
    for (const payload of bad) {
      assert.deepEqual(verifyProxyTokenSignature(forge(payload), SECRET, NOW), {
        ok: false,
        reason: 'malformed',
      });
    }
  });

  it('refuses an empty secret instead of signing with it', () => {
    assert.throws(() => signProxyToken(claims(), ''));
    assert.throws(() => verifyProxyTokenSignature('svcpt_x.y', '', NOW));
  });
});

describe('proxyTokenTtlSeconds', () => {
  it('defaults to 4 h general and 15 min for ha_pool', () => {
    assert.equal(proxyTokenTtlSeconds('general'), 14_400);
    assert.equal(proxyTokenTtlSeconds('ha_pool'), 900);
    assert.equal(proxyTokenTtlSeconds('something_else'), 14_400);
  });

  it('applies overrides per type and a general override to unknown types', () => {
    const overrides = { ha_pool: 300, general: 7200, batch: 60 };
    assert.equal(proxyTokenTtlSeconds('ha_pool', overrides), 300);
    assert.equal(proxyTokenTtlSeconds('batch', overrides), 60);
    assert.equal(proxyTokenTtlSeconds('general', overrides), 7200);
    assert.equal(proxyTokenTtlSeconds('other', overrides), 7200);
    assert.equal(proxyTokenTtlSeconds('ha_pool', { general: 7200 }), 900);
  });

  it('rejects a non-positive or fractional TTL', () => {
    assert.throws(() => proxyTokenTtlSeconds('general', { general: 0 }), RangeError);
    assert.throws(() => proxyTokenTtlSeconds('ha_pool', { ha_pool: 1.5 }), RangeError);
  });
});
