// Who sent an OTLP export (issue 29 item 2): the owner of the credential in `Authorization: Bearer`,
// to whom every call and figure of the export is attributed, whatever names the payload carries
// (user.email, user.account_uuid and the like are the CLI's claims, not identities).
//
// Accepted: a personal upload token (svcup_..., services/upload-tokens.ts: revoked or expired 401, an
// inactive owner or tenant 403). The shared upload key names nobody and is not accepted here.
import { UnauthorizedError } from '../../domain/errors.ts';
import { isPersonalUploadToken } from '../../domain/upload-tokens.ts';
import { uploadAuthService } from '../upload-tokens.ts';

export interface IngestCaller {
  userId: number;
  tenantId: number;
  username: string;
  credential: 'upload_token' | 'gateway_key';
}

export function ingestCallerResolver(deps: Parameters<typeof uploadAuthService>[0]) {
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
    // GATEWAY KEYS GO HERE (issue 29 item 1, branch h-gw): when `isGatewayKey(raw)`
    // (domain/gateway-keys.ts), `await verifyGatewayKey(raw)` (services/gateway-keys.ts) and on
    // {ok: true, key} return {userId: key.userId, tenantId: key.tenantId, username: key.username,
    // credential: 'gateway_key'}; on {ok: false} throw a 401.
    throw new UnauthorizedError(
      'Authorization: Bearer <personal upload token or gateway key> required (OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer <token>)',
    );
  };
}
