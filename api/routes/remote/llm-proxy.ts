// The model proxy (spec document 1, "Model proxy"; rules 1-3 and 5):
//
//   POST /api/remote/llm-proxy          forwards to the stored base URL itself
//   ANY  /api/remote/llm-proxy/<path>   forwards to {base_url}/<path>
//
// Per call: read the proxy token (Authorization: Bearer, x-api-key, x-goog-api-key or ?key=), check
// its signature (memoised), read the token record, session state, user and tenant standing and the
// tenant's active stored key for the token's provider in ONE query, reserve quota (one conditional
// UPDATE for the user's rows, one for the tenant's), decrypt the key (memoised for seconds) and
// stream the call through forwardToProvider. When the response is over the reservation is settled
// with the tokens read from it. On PostgreSQL the reservation runs in parallel with the context read
// (the signed claims already name user and tenant) and is released if the call is refused.
//
// Our own refusals answer {error: {message, type}} with a type no provider uses:
//   401 proxy_auth_error    no token, or a malformed, forged, expired, revoked or unknown token, or
//                           its session is no longer active
//   403 proxy_auth_error    the token's user is disabled or its tenant suspended / deleted
//   400 config_error        no API key configured for the provider (400, not 5xx: the official SDKs
//                           and the CLIs retry 5xx with back-off, and a missing key never fixes itself)
//   500 config_error        the stored key cannot be decrypted (SVC_ENCRYPTION_KEY changed)
//   429 quota_exceeded      a user or tenant quota has no room (with x-should-retry: false and
//                           retry-after = seconds until the period ends)
//   503 quota_check_failed  the quota could not be checked (fail closed)
// plus forwardToProvider's own upstream_error / proxy_error. Provider errors pass through untouched.
// Every refusal is audited (REMOTE_LLM_PROXY_REFUSED) without the token or key.
import type { Express, Request, Response } from 'express';
import type { ProxyCallContext } from '../../../db/repositories/proxy-tokens.ts';
import {
  DEFAULT_PROVIDER_BASE_URLS,
  isKeyProvider,
  type KeyProvider,
} from '../../../domain/key-providers.ts';
import {
  dimensionName,
  type QuotaExceeded,
  quotaExceededMessage,
  refusalPeriod,
  secondsUntilPeriodEnd,
} from '../../../domain/quota.ts';
import { detectWireFormat, type WireFormat } from '../../../domain/usage/wire-format.ts';
import {
  type ProxyTokenRefusal,
  proxyCallRefusal,
  proxyTokenService,
} from '../../../services/proxy-tokens.ts';
import { type QuotaSubject, quotaServiceFor, type Reservation } from '../../../services/quota.ts';
import { storedKeyCipher } from '../../../services/stored-keys.ts';
import { writeAudit } from '../../audit.ts';
import type { AppDeps } from '../../deps.ts';
import { type ForwardResult, forwardToProvider } from '../../llm-proxy/forward.ts';
import { providerAuthHeaders } from '../../llm-proxy/provider-auth.ts';
import { type ProxyErrorType, sendProxyError } from '../../llm-proxy/proxy-error.ts';

export const LLM_PROXY_PREFIX = '/api/remote/llm-proxy';

const BEARER = /^Bearer\s+(\S+)\s*$/i;
const NO_RETRY = { 'x-should-retry': 'false' } as const;

const TOKEN_MESSAGES: Record<ProxyTokenRefusal | 'missing', string> = {
  missing: 'Proxy token required (Authorization: Bearer, x-api-key or x-goog-api-key)',
  malformed: 'Invalid proxy token',
  bad_signature: 'Invalid proxy token',
  unknown: 'Invalid proxy token',
  expired: 'Proxy token expired',
  revoked: 'Proxy token revoked',
  session_inactive: 'The session of this proxy token is no longer active',
  user_inactive: 'The user of this proxy token is disabled',
  tenant_inactive: 'The tenant of this proxy token is not active',
};

/** The caller's proxy token, from the places the providers' official clients put their key. */
export function proxyTokenOf(req: Request): string | undefined {
  const h = req.headers;
  const authorization = h.authorization;
  if (authorization) {
    const m = BEARER.exec(authorization);
    if (m) return m[1];
  }
  const apiKey = h['x-api-key'];
  if (typeof apiKey === 'string' && apiKey.trim()) return apiKey.trim();
  const googKey = h['x-goog-api-key'];
  if (typeof googKey === 'string' && googKey.trim()) return googKey.trim();
  const url = req.originalUrl;
  const q = url.indexOf('?');
  if (q !== -1 && url.includes('key=', q)) {
    const key = new URLSearchParams(url.slice(q + 1)).get('key');
    if (key) return key;
  }
  return undefined;
}

type ReserveOutcome =
  | { kind: 'ok'; reservation: Reservation }
  | { kind: 'exceeded'; exceeded: QuotaExceeded[] }
  | { kind: 'failed' };

interface Refusal {
  status: number;
  type: ProxyErrorType;
  message: string;
  reason: string;
  headers?: Record<string, string>;
  details?: Record<string, unknown>;
}

export function mountLlmProxy(app: Express, deps: AppDeps): void {
  const handler = llmProxyHandler(deps);
  app.post(LLM_PROXY_PREFIX, handler);
  app.all(`${LLM_PROXY_PREFIX}/*path`, handler);
}

export function llmProxyHandler(deps: AppDeps) {
  const tokens = proxyTokenService(deps);
  const quota = quotaServiceFor(deps);
  const cipher = storedKeyCipher(deps.settings);
  // PostgreSQL: a round trip each, so the reservation overlaps the context read. SQLite runs them
  // in-process in microseconds; there the reservation waits for the verdict and a refused token
  // never writes.
  const overlapReservation = deps.database.dialect === 'postgres';

  async function reserve(subject: QuotaSubject): Promise<ReserveOutcome> {
    try {
      const r = await quota.reserve(subject);
      return r.ok ? { kind: 'ok', reservation: r.reservation } : { kind: 'exceeded', exceeded: r.exceeded };
    } catch (error) {
      deps.logger.error({ err: (error as Error).message }, 'llm-proxy: quota check failed; call refused');
      return { kind: 'failed' };
    }
  }

  function release(outcome: ReserveOutcome | undefined) {
    if (outcome?.kind === 'ok') void quota.release(outcome.reservation);
  }

  async function refuse(
    req: Request,
    res: Response,
    r: Refusal,
    who: { claims?: { sid: string; uid: number; tid: number | null; prv: string }; ctx?: ProxyCallContext },
  ) {
    await writeAudit(deps, req, {
      action: 'REMOTE_LLM_PROXY_REFUSED',
      resourceType: 'agent_session',
      resourceId: who.claims?.sid,
      success: false,
      severity: 'warning',
      userId: who.claims?.uid ?? null,
      tenantId: who.ctx?.tenantId ?? who.claims?.tid ?? null,
      username: who.ctx?.username ?? null,
      details: {
        reason: r.reason,
        status: r.status,
        ...(who.claims ? { provider: who.claims.prv } : {}),
        path: pathOnly(req.originalUrl.slice(LLM_PROXY_PREFIX.length)) || '/',
        ...r.details,
      },
    });
    sendProxyError(res, r.status, r.type, r.message, r.headers);
  }

  async function handle(req: Request, res: Response): Promise<void> {
    const path = req.originalUrl.slice(LLM_PROXY_PREFIX.length);
    const token = proxyTokenOf(req);
    if (token === undefined) {
      return refuse(
        req,
        res,
        { status: 401, type: 'proxy_auth_error', message: TOKEN_MESSAGES.missing, reason: 'missing_token' },
        {},
      );
    }
    const sig = tokens.verifySignature(token);
    if (!sig.ok || !isKeyProvider(sig.claims.prv)) {
      const reason = sig.ok ? 'malformed' : sig.reason;
      return refuse(
        req,
        res,
        { status: 401, type: 'proxy_auth_error', message: TOKEN_MESSAGES[reason], reason },
        // Claims of a token whose signature failed are not trusted enough to name anyone.
        { claims: sig.ok ? sig.claims : undefined },
      );
    }
    const claims = sig.claims;
    const provider = claims.prv as KeyProvider;
    const pathname = pathOnly(path);
    const bare = pathname === '' || pathname === '/';
    // Calls that produce an assistant response are metered; model lists, token counts etc. are not.
    const metered = bare || detectWireFormat(provider, path) !== null;

    // reserve() never rejects, so an early reservation is always awaited and released on refusal.
    const early =
      metered && overlapReservation && claims.tid !== null
        ? reserve({ userId: claims.uid, tenantId: claims.tid })
        : undefined;
    let reserved: ReserveOutcome | undefined;
    let ctx: ProxyCallContext | undefined;
    try {
      ctx = await tokens.callContext(claims.jti);
      reserved = await early;
    } catch (error) {
      release(await early);
      deps.logger.error({ err: (error as Error).message }, 'llm-proxy: token check failed; call refused');
      return refuse(
        req,
        res,
        {
          status: 503,
          type: 'quota_check_failed',
          message: 'The proxy could not check the token and quota; try again',
          reason: 'check_failed',
        },
        { claims },
      );
    }

    const refusal = proxyCallRefusal(claims, ctx, deps.now());
    if (refusal !== null) {
      release(reserved);
      const forbidden = refusal === 'user_inactive' || refusal === 'tenant_inactive';
      return refuse(
        req,
        res,
        {
          status: forbidden ? 403 : 401,
          type: 'proxy_auth_error',
          message: TOKEN_MESSAGES[refusal],
          reason: refusal,
        },
        { claims, ctx },
      );
    }
    const call = ctx!;
    if (call.key === null) {
      release(reserved);
      return refuse(
        req,
        res,
        {
          status: 400,
          type: 'config_error',
          message: `No API key configured for provider ${provider}`,
          reason: 'no_key',
          headers: NO_RETRY,
        },
        { claims, ctx },
      );
    }

    if (metered && reserved === undefined)
      reserved = await reserve({ userId: call.userId, tenantId: call.tenantId });
    if (reserved?.kind === 'failed') {
      return refuse(
        req,
        res,
        {
          status: 503,
          type: 'quota_check_failed',
          message: 'The quota could not be checked, so the call was refused; try again',
          reason: 'quota_check_failed',
        },
        { claims, ctx },
      );
    }
    if (reserved?.kind === 'exceeded') {
      const retryAfter = secondsUntilPeriodEnd(refusalPeriod(reserved.exceeded), deps.now());
      return refuse(
        req,
        res,
        {
          status: 429,
          type: 'quota_exceeded',
          message: quotaExceededMessage(reserved.exceeded),
          reason: 'quota_exceeded',
          headers: { ...NO_RETRY, 'retry-after': String(retryAfter) },
          details: { exceeded: reserved.exceeded.map(dimensionName) },
        },
        { claims, ctx },
      );
    }

    let apiKey: string;
    try {
      apiKey = cipher.open(call.key.encryptedKey);
    } catch {
      release(reserved);
      return refuse(
        req,
        res,
        {
          status: 500,
          type: 'config_error',
          message: `The stored API key for provider ${provider} cannot be decrypted`,
          reason: 'key_undecryptable',
          details: { key_id: call.key.id },
        },
        { claims, ctx },
      );
    }

    const upstreamBase = call.key.baseUrl ?? DEFAULT_PROVIDER_BASE_URLS[provider];
    let wireFormat: WireFormat | null | undefined;
    if (bare) wireFormat = detectWireFormat(provider, pathOnly(safePathname(upstreamBase)));
    const reservation = reserved?.kind === 'ok' ? reserved.reservation : undefined;
    const log = req.log ?? deps.logger;

    forwardToProvider({
      req,
      res,
      upstreamBase,
      path: bare ? '' : path,
      providerAuth: providerAuthHeaders(provider, apiKey),
      provider,
      wireFormat,
      onDone: (result: ForwardResult) => {
        if (reservation === undefined) return;
        // One assistant response = one request (spec rule 3): the provider answered 2xx, even if the
        // caller left before the end. Anything else gives the reservation back.
        const counted = result.status >= 200 && result.status < 300;
        void quota.settle(
          reservation,
          { counted, usage: result.usage },
          {
            sessionId: call.sessionId,
            toolName: call.toolName ?? 'remote',
            hostName: call.hostName ?? 'localhost',
          },
        );
        if (counted && result.usage === null) {
          log.warn(
            {
              session_id: call.sessionId,
              provider,
              path: pathname,
              wire_format: result.wireFormat,
              reason: result.usageError,
              aborted: result.aborted,
            },
            'llm-proxy: usage could not be read; counted as one request with unknown tokens',
          );
        } else if (log.isLevelEnabled('debug')) {
          log.debug(
            {
              session_id: call.sessionId,
              provider,
              status: result.status,
              wire_format: result.wireFormat,
              tokens: result.usage?.totalTokens ?? 0,
              partial: result.usagePartial,
              aborted: result.aborted,
              upstream_error: result.upstreamError,
            },
            'llm-proxy: call finished',
          );
        }
      },
    });
  }

  return (req: Request, res: Response): void => {
    handle(req, res).catch((error) => {
      deps.logger.error({ err: (error as Error)?.message }, 'llm-proxy: unexpected failure');
      sendProxyError(res, 500, 'proxy_error', 'The proxy failed to handle the request');
    });
  };
}

function pathOnly(path: string): string {
  const q = path.indexOf('?');
  return q === -1 ? path : path.slice(0, q);
}

function safePathname(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return '';
  }
}
