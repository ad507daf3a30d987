// Auth session tokens: 256 random bits, handed to the client once; only their SHA-256 is stored.
import { createHash, randomBytes } from 'node:crypto';

export const newSessionToken = (): string => randomBytes(32).toString('base64url');
export const hashSessionToken = (token: string): string =>
  createHash('sha256').update(token, 'utf8').digest('hex');
/** Tokens we issue are 43 base64url characters; anything far off is not worth a database round trip. */
export const plausibleSessionToken = (token: string): boolean => token.length >= 16 && token.length <= 256;
