// Personal upload tokens (issue 25 item 5): who sent an upload. A personal token (domain/upload-tokens.ts)
// names its owner, and every row uploaded with it counts for that owner (user and tenant) whatever its
// sender fields say. The shared SVC_UPLOAD_AUTH_KEY names nobody: rows are attributed by their sender
// fields, so it is for trusted server-side collectors only and can be switched off
// (SVC_UPLOAD_SHARED_KEY=off).

import { createHash, timingSafeEqual } from 'node:crypto';
import type { DatabaseHandle } from '../db/client.ts';
import { uploadTokensRepository } from '../db/repositories/upload-tokens.ts';
import { bearerTokenOf } from '../domain/bearer.ts';
import { ForbiddenError, ServiceUnavailableError, UnauthorizedError } from '../domain/errors.ts';
import { DEFAULT_TENANT_ID } from '../domain/tenants.ts';
import { hashUploadToken, isPersonalUploadToken, uploadTokenRefusal } from '../domain/upload-tokens.ts';

/** Who an upload is from: the shared key (rows name their senders) or a personal token's owner. */
export type UploadIdentity =
  | { kind: 'shared' }
  | { kind: 'personal'; tokenId: number; userId: number; tenantId: number; username: string };

/** A refused personal token: the error to answer and what to audit. */
export class UploadTokenRefused extends Error {
  constructor(
    readonly error: UnauthorizedError | ForbiddenError,
    readonly reason: string,
    readonly token?: { id: number; userId: number; tenantId: number | null; username: string },
  ) {
    super(error.message);
  }
}

/** last_used_at is written at most this often per token (not one write per upload). */
const TOUCH_EVERY_MS = 60_000;

const digest = (value: string) => createHash('sha256').update(value).digest();

export function uploadAuthService(deps: {
  database: DatabaseHandle;
  settings: { SVC_UPLOAD_AUTH_KEY?: string | undefined; SVC_UPLOAD_SHARED_KEY: 'on' | 'off' };
  now: () => Date;
}) {
  const tokens = uploadTokensRepository(deps.database);

  async function personal(sent: string): Promise<UploadIdentity> {
    const row = await tokens.byHash(hashUploadToken(sent));
    if (!row) throw new UploadTokenRefused(new ForbiddenError('Invalid upload token'), 'unknown_token');
    const now = deps.now();
    const owner = { isActive: row.ownerActive, deletedAt: row.ownerDeletedAt };
    const refusal = uploadTokenRefusal(row, owner, row.tenant, now);
    const who = { id: row.id, userId: row.userId, tenantId: row.ownerTenantId, username: row.username };
    if (refusal) {
      // A revoked or expired token is a credential that no longer works (401); the token of a
      // deactivated owner or of an inactive tenant is valid but not allowed (403).
      const expired = refusal.kind === 'revoked' || refusal.kind === 'expired';
      const error = expired ? new UnauthorizedError(refusal.message) : new ForbiddenError(refusal.message);
      throw new UploadTokenRefused(error, refusal.kind, who);
    }
    if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() >= TOUCH_EVERY_MS)
      await tokens.touch(row.id, now);
    return {
      kind: 'personal',
      tokenId: row.id,
      userId: row.userId,
      tenantId: row.ownerTenantId ?? DEFAULT_TENANT_ID,
      username: row.username,
    };
  }

  /** The shared key check: 503 unset, 403 switched off or wrong (constant time in the key's content). */
  function shared(sent: string): UploadIdentity {
    const key = deps.settings.SVC_UPLOAD_AUTH_KEY;
    if (!key)
      throw new ServiceUnavailableError(
        'Uploads with a shared key are disabled: the server has no upload key (set SVC_UPLOAD_AUTH_KEY, or use a personal upload token)',
      );
    if (deps.settings.SVC_UPLOAD_SHARED_KEY === 'off')
      throw new ForbiddenError(
        'The shared upload key is switched off on this server (SVC_UPLOAD_SHARED_KEY=off): use a personal upload token',
      );
    if (!timingSafeEqual(digest(sent), digest(key))) throw new ForbiddenError('Invalid upload key');
    return { kind: 'shared' };
  }

  return {
    /**
     * The credential of an upload: X-Upload-Auth (a personal token or the shared key), or a personal
     * token as `Authorization: Bearer`. 401 without one.
     */
    async identify(headers: { uploadAuth?: string; authorization?: string }): Promise<UploadIdentity> {
      const bearer = bearerTokenOf(headers.authorization);
      const sent = headers.uploadAuth || (bearer && isPersonalUploadToken(bearer) ? bearer : undefined);
      if (!sent)
        throw new UnauthorizedError(
          'X-Upload-Auth header required (a personal upload token or the upload key)',
        );
      return isPersonalUploadToken(sent) ? personal(sent) : shared(sent);
    },
  };
}
