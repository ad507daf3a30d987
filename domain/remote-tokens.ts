// Registration tokens and agent tokens: 256-bit random secrets of which only the SHA-256 is stored.
// The agent token is compared in constant time (the lookup is by machine id, not by the secret).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const newRemoteSecret = (): string => randomBytes(32).toString('base64url');

export const hashRemoteSecret = (secret: string): string =>
  createHash('sha256').update(secret, 'utf8').digest('hex');

export function remoteSecretMatches(secret: string, storedHash: string | null | undefined): boolean {
  if (!storedHash || !secret) return false;
  const a = Buffer.from(hashRemoteSecret(secret), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
