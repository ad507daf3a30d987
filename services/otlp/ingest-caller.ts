// Who sent an OTLP export (issue 29 item 2): the owner of the credential in `Authorization: Bearer`,
// to whom every call and figure of the export is attributed, whatever names the payload carries
// (user.email, user.account_uuid and the like are the CLI's claims, not identities).
//
// Accepted: a personal upload token (svcup_..., services/upload-tokens.ts: revoked or expired 401, an
// inactive owner or tenant 403) or a personal gateway key (svcgk_..., services/gateway-keys.ts: the
// same answers, and 403 for a key of a user without a tenant). The shared upload key names nobody
// and is not accepted here.
import { ForbiddenError, UnauthorizedError } from '../../domain/errors.ts';
import { isGatewayKey } from '../../domain/gateway-keys.ts';
import { isPersonalUploadToken } from '../../domain/upload-tokens.ts';
import { verifyGatewayKey } from '../gateway-keys.ts';
import { uploadAuthService } from '../upload-tokens.ts';

export interface IngestCaller {
  userId: number;
  tenantId: number;
  username: string;
  credential: 'upload_token' | 'gateway_key';
}

export function ingestCallerResolver(
  deps: Parameters<typeof uploadAuthService>[0] & Parameters<typeof verifyGatewayKey>[0],
) {
  const uploads = uploadAuthService(deps);

  /** The caller of `raw` (the bearer credential); throws 401/403 (UploadTokenRefused for a token). */
  return async function resolveIngestCaller(raw: string | undefined): Promise<IngestCaller> {
    if (raw && isPersonalUploadToken(raw)) {
      const who = await uploads.identify({ authorization: `Bearer ${raw}` });
      if (who.kind === 'personal')
        return {
          userId: who.userId,
          tenantId: who.tenantId,
          username: who.username,
          credential: 'upload_token',
        };
    }
    if (raw && isGatewayKey(raw)) {
      const v = await verifyGatewayKey(deps, raw);
      if (v.ok && v.key.tenantId !== null)
        return {
          userId: v.key.userId,
          tenantId: v.key.tenantId,
          username: v.key.username,
          credential: 'gateway_key',
        };
      if (v.ok || v.reason === 'user_inactive' || v.reason === 'tenant_inactive')
        throw new ForbiddenError('This gateway key may not send telemetry (no active user or tenant)');
      throw new UnauthorizedError(`Gateway key ${v.reason === 'malformed' ? 'unknown' : v.reason}`);
    }
    throw new UnauthorizedError(
      'Authorization: Bearer <personal upload token or gateway key> required (OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer <token>)',
    );
  };
}
