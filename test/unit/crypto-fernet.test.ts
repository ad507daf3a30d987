import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  decryptSecret,
  deriveFernetKey,
  encryptSecret,
  FernetError,
  fernetKeyToString,
  keyHash,
  maskKey,
  parseFernetKey,
} from '../../domain/crypto/fernet.ts';

// The Fernet spec's generate.json / verify.json vector.
const SPEC_SECRET = 'cw_0x689RpI-jtRR7oE8h_eQsKImvJapLeSbXpwF4e4=';
const SPEC_TOKEN =
  'gAAAAAAdwJ6wAAECAwQFBgcICQoLDA0ODy021cpGVWKZ_eEwCGM4BLLF_5CV9dOPmrhuVUPgJobwOz7JcbmrR64jVmpU4IwqDA==';
const SPEC_TIMESTAMP = 499162800; // 1985-10-26T01:20:00-07:00
const SPEC_IV = Buffer.from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);

/** Flips one bit of the decoded token at byte `index` and re-encodes it. */
function flipByte(token: string, index: number): string {
  const raw = Buffer.from(token, 'base64url');
  raw[index] ^= 0x01;
  return raw.toString('base64url');
}

describe('Fernet spec vector', () => {
  const key = parseFernetKey(SPEC_SECRET);

  it('generates the spec token byte for byte', () => {
    assert.equal(encryptSecret('hello', key, { timestamp: SPEC_TIMESTAMP, iv: SPEC_IV }), SPEC_TOKEN);
  });

  it('decrypts the spec token', () => {
    assert.equal(decryptSecret(SPEC_TOKEN, key), 'hello');
  });

  it('accepts the token without base64 padding', () => {
    assert.equal(decryptSecret(SPEC_TOKEN.replace(/=+$/, ''), key), 'hello');
  });

  it('round-trips the key string form', () => {
    assert.equal(fernetKeyToString(key), SPEC_SECRET);
  });
});

describe('deriveFernetKey', () => {
  it('is SHA-256 of the secret', () => {
    const expected = createHash('sha256').update('my-encryption-key').digest();
    assert.deepEqual(deriveFernetKey('my-encryption-key'), expected);
  });

  it('rejects an empty secret', () => {
    assert.throws(() => deriveFernetKey(''));
  });
});

describe('encryptSecret / decryptSecret', () => {
  const key = deriveFernetKey('unit-test-secret');

  it('round-trips ASCII, unicode, empty and block-sized plaintexts', () => {
    for (const plain of ['sk-proj-abc123', 'клю́ч 🔑', '', 'x'.repeat(16), 'y'.repeat(1000)]) {
      assert.equal(decryptSecret(encryptSecret(plain, key), key), plain);
    }
  });

  it('uses a fresh IV each time', () => {
    assert.notEqual(encryptSecret('same', key), encryptSecret('same', key));
  });

  it('writes a standard header: version 0x80 and the timestamp', () => {
    const raw = Buffer.from(encryptSecret('v', key, { timestamp: 1234567890 }), 'base64url');
    assert.equal(raw[0], 0x80);
    assert.equal(Number(raw.readBigUInt64BE(1)), 1234567890);
  });

  it('detects tampering anywhere in the token', () => {
    const token = encryptSecret('sk-secret-value', key);
    const length = Buffer.from(token, 'base64url').length;
    for (const index of [0, 5, 12, 30, length - 40, length - 1]) {
      assert.throws(() => decryptSecret(flipByte(token, index), key), FernetError, `byte ${index}`);
    }
  });

  it('rejects a token made with another key, without revealing the plaintext', () => {
    const token = encryptSecret('sk-do-not-leak', key);
    assert.throws(
      () => decryptSecret(token, deriveFernetKey('other')),
      (error: unknown) =>
        error instanceof FernetError &&
        /signature mismatch/.test(error.message) &&
        !error.message.includes('sk-do-not-leak') &&
        !error.message.includes(token),
    );
  });

  it('rejects garbage, truncated and non-base64 tokens with FernetError', () => {
    const token = encryptSecret('abc', key);
    for (const bad of ['', 'not base64!', token.slice(0, 40), 'gAAAAA']) {
      assert.throws(() => decryptSecret(bad, key), FernetError);
    }
  });
});

describe('keyHash and maskKey', () => {
  it('keyHash is the SHA-256 hex digest', () => {
    assert.equal(keyHash('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('maskKey shows only a short prefix and the last four characters', () => {
    assert.equal(maskKey('sk-proj-1234567890abcdef'), 'sk-...cdef');
    assert.equal(maskKey('short-key'), '****');
  });
});
