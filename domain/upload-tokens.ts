// Personal upload tokens (issue 25 item 5), pure: the token's shape, its hash and whether a stored token
// may upload now. A token is `svcup_` + 256 random bits (base64url); the prefix lets the upload routes
// tell it from the shared SVC_UPLOAD_AUTH_KEY and lets secret scanners recognise a leaked one. Only its
// SHA-256 is stored, and the lookup is by that hash, so nothing is compared in variable time.
import { createHash, randomBytes } from 'node:crypto';
import { tenantRefusal } from './tenants.ts';

export const UPLOAD_TOKEN_PREFIX = 'svcup_';
/** Characters of the token shown in lists as a hint (the prefix and 6 random characters). */
const HINT_LENGTH = UPLOAD_TOKEN_PREFIX.length + 6;

export const newUploadToken = (): string => UPLOAD_TOKEN_PREFIX + randomBytes(32).toString('base64url');

export const isPersonalUploadToken = (value: string): boolean => value.startsWith(UPLOAD_TOKEN_PREFIX);

export const hashUploadToken = (token: string): string =>
  createHash('sha256').update(token, 'utf8').digest('hex');

export const uploadTokenHint = (token: string): string => token.slice(0, HINT_LENGTH);

/** Why a stored token may not upload now, or null when it may; `kind` says whose fault it is. */
export function uploadTokenRefusal(
  token: { revokedAt: Date | null; expiresAt: Date | null },
  owner: { isActive: boolean; deletedAt: Date | null },
  tenant: { status: string; deletedAt: Date | null; name: string } | null,
  now: Date,
): { kind: 'revoked' | 'expired' | 'owner_inactive' | 'tenant_inactive'; message: string } | null {
  if (token.revokedAt) return { kind: 'revoked', message: 'This upload token has been revoked' };
  if (token.expiresAt && token.expiresAt.getTime() <= now.getTime())
    return { kind: 'expired', message: 'This upload token has expired' };
  if (!owner.isActive || owner.deletedAt)
    return { kind: 'owner_inactive', message: "This upload token's owner is deactivated" };
  const refusal = tenantRefusal(tenant);
  if (refusal) return { kind: 'tenant_inactive', message: refusal };
  return null;
}
