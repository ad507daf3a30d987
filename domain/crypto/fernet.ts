/**
 * Stored-secret encryption in the Fernet token format (https://github.com/fernet/spec), so that a
 * ciphertext written here can be read by any standard Fernet implementation given the same key:
 *
 *   0x80 | timestamp (u64 BE, seconds) | IV (16) | AES-128-CBC ciphertext (PKCS7) | HMAC-SHA256 (32)
 *
 * encoded as URL-safe base64 with padding. The HMAC covers every byte before it.
 *
 * The 32-byte key is SHA-256 of the configured secret (`SVC_ENCRYPTION_KEY`); as in a Fernet key, its
 * first 16 bytes sign and its last 16 bytes encrypt. `fernetKeyToString` gives the standard base64url
 * form of that key for use with other Fernet tools.
 *
 * Pure: no I/O; the only impurity is the clock and random IV, both injectable for test vectors.
 */
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';

const VERSION = 0x80;
const HEADER_LENGTH = 1 + 8 + 16; // version + timestamp + IV
const HMAC_LENGTH = 32;
const BLOCK = 16;

/** A 32-byte Fernet key: bytes 0..15 sign, bytes 16..31 encrypt. */
export type FernetKey = Buffer;

/** Thrown for any token that cannot be decrypted. The message never contains the token or the key. */
export class FernetError extends Error {
  override name = 'FernetError';
}

/** Derives the Fernet key from the configured secret: SHA-256(secret). */
export function deriveFernetKey(secret: string): FernetKey {
  if (secret.length === 0) throw new Error('Encryption secret must not be empty');
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** Reads a standard Fernet key string (URL-safe base64 of 32 bytes). */
export function parseFernetKey(encoded: string): FernetKey {
  const key = Buffer.from(encoded, 'base64url');
  if (key.length !== 32) throw new FernetError('Fernet key must be 32 bytes of URL-safe base64');
  return key;
}

/** The standard Fernet string form of a key (URL-safe base64 with padding). */
export function fernetKeyToString(key: FernetKey): string {
  return toPaddedBase64Url(assertKey(key));
}

export interface EncryptOptions {
  /** Seconds since the epoch written into the token; defaults to now. */
  timestamp?: number;
  /** 16-byte IV; defaults to random. Only tests should pass one. */
  iv?: Buffer;
}

/** Encrypts a UTF-8 secret into a Fernet token. */
export function encryptSecret(plain: string, key: FernetKey, options: EncryptOptions = {}): string {
  assertKey(key);
  const iv = options.iv ?? randomBytes(BLOCK);
  if (iv.length !== BLOCK) throw new Error('IV must be 16 bytes');
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);

  const header = Buffer.alloc(HEADER_LENGTH);
  header[0] = VERSION;
  header.writeBigUInt64BE(BigInt(timestamp), 1);
  iv.copy(header, 9);

  // Node's default auto-padding is PKCS7, as Fernet requires.
  const cipher = createCipheriv('aes-128-cbc', key.subarray(16), iv);
  const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  const signed = Buffer.concat([header, ciphertext]);
  const mac = createHmac('sha256', key.subarray(0, 16)).update(signed).digest();
  return toPaddedBase64Url(Buffer.concat([signed, mac]));
}

/**
 * Decrypts a Fernet token. Stored secrets do not expire, so no TTL is applied (as with a standard
 * Fernet `decrypt` without `ttl`). Throws FernetError on any malformed, tampered or wrong-key token.
 */
export function decryptSecret(token: string, key: FernetKey): string {
  assertKey(key);
  if (!/^[A-Za-z0-9_-]+={0,2}$/.test(token)) throw new FernetError('Invalid token: not URL-safe base64');
  const raw = Buffer.from(token, 'base64url');
  if (raw.length < HEADER_LENGTH + BLOCK + HMAC_LENGTH) throw new FernetError('Invalid token: too short');
  if (raw[0] !== VERSION) throw new FernetError('Invalid token: unknown version');

  const signed = raw.subarray(0, raw.length - HMAC_LENGTH);
  const mac = raw.subarray(raw.length - HMAC_LENGTH);
  const expected = createHmac('sha256', key.subarray(0, 16)).update(signed).digest();
  // The HMAC is checked before anything is decrypted, in constant time, so a forged token reveals nothing.
  if (!timingSafeEqual(mac, expected)) {
    throw new FernetError('Invalid token: signature mismatch (tampered or wrong key)');
  }

  const ciphertext = signed.subarray(HEADER_LENGTH);
  if (ciphertext.length % BLOCK !== 0) throw new FernetError('Invalid token: bad ciphertext length');
  const iv = signed.subarray(9, HEADER_LENGTH);
  try {
    const decipher = createDecipheriv('aes-128-cbc', key.subarray(16), iv);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
  } catch {
    throw new FernetError('Invalid token: bad padding');
  }
}

/** SHA-256 hex of a secret: identifies a stored key (duplicate detection) without being reversible. */
export function keyHash(plain: string): string {
  return createHash('sha256').update(plain, 'utf8').digest('hex');
}

/**
 * Masked form for listings: the first three and last four characters (`sk-...abcd`). Keys too short to
 * keep most of their characters hidden are masked entirely.
 */
export function maskKey(plain: string): string {
  if (plain.length < 16) return '****';
  return `${plain.slice(0, 3)}...${plain.slice(-4)}`;
}

function assertKey(key: FernetKey): FernetKey {
  if (key.length !== 32) throw new FernetError('Fernet key must be 32 bytes');
  return key;
}

function toPaddedBase64Url(bytes: Buffer): string {
  const unpadded = bytes.toString('base64url');
  return unpadded + '='.repeat((4 - (unpadded.length % 4)) % 4);
}
