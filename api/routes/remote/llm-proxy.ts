// The model proxy (spec document 1, "Model proxy"; rules 1-3 and 5):
//
//   POST /api/remote/llm-proxy          forwards to the stored base URL itself (other methods: 405)
//   HEAD / OPTIONS on the bare prefix   200 / 204, no token needed, not audited: the connection
//                                       warm-up CLIs send (Claude Code: `HEAD {ANTHROPIC_BASE_URL}`)
//   ANY  /api/remote/llm-proxy/<path>   forwards to {base_url}/<path>
//
// Both are served ahead of Express (see mountLlmProxy), straight from Node's HTTP server.
//
// Per call: read the proxy token (Authorization: Bearer, x-api-key, x-goog-api-key or ?key=), check
// its signature (memoised), read the token record, session state, user and tenant standing and the
// tenant's active stored key for the token's provider in ONE query (cached per instance once a call
// with it was answered, revocation pushed: services/proxy/call-context-cache.ts), reserve quota (from
// this instance's lease when SVC_QUOTA_LEASE_REQUESTS is set: services/quota/leases.ts; else one
// conditional UPDATE for the user's rows, one for the tenant's), decrypt the key (memoised) and
// stream the call through forwardToProvider. When the response is over the reservation is settled
// with the tokens read from it, and a call the provider answered (2xx) is queued as one assistant row
// of daily_messages (services/usage/remote-messages.ts; written off this path, counted nowhere twice).
// On PostgreSQL the reservation runs in parallel with the context read (the signed claims already
// name user and tenant) and is released if the call is refused.
//
// A personal gateway key (`svcgk_…`, issue 29) in any of the token's places is resolved by
// api/llm-proxy/gateway-caller.ts (hash lookup, cached per instance, revocation pushed) and then takes
// this same path, plus its own limits after the quota; its call is one `gateway` message row.
//
// The path below the prefix is decoded and normalised once (domain/proxy/request-path.ts) and must be
// on the provider's endpoint allow-list (domain/proxy/endpoints.ts); EVERY forwarded call reserves one
// request, and the endpoint's metering decides whether tokens are read from the answer.
//
// Our own refusals answer {error: {message, type}} with a type no provider uses:
//   400 proxy_error         a malformed or ambiguous path (encoded slash, dot segment, `\`, `;`, `#`, `//`)
//   404 proxy_error         an endpoint that is not on the allow-list
//   403 proxy_error         an endpoint refused on purpose (batches, files: usage known too late to meter)
//   401 proxy_auth_error    no token, or a malformed, forged, expired, revoked or unknown token, or
//                           its session is no longer active
//   403 proxy_auth_error    the token's user is disabled or its tenant suspended / deleted
//   400 config_error        no API key configured for the provider (400, not 5xx: the official SDKs
//                           and the CLIs retry 5xx with back-off, and a missing key never fixes itself)
//   500 config_error        the stored key cannot be decrypted (SVC_ENCRYPTION_KEY changed)
//   429 quota_exceeded      a user or tenant quota has no room (with x-should-retry: false and
//                           retry-after = seconds until the period ends)
//   503 quota_check_failed  the quota could not be checked (fail closed)
//   403 content_filtered    the prompt (user/prompt text of the body) matched an enabled block rule
//                           of the tenant's content filter; nothing was sent to the provider
// plus forwardToProvider's own upstream_error / proxy_error. Provider errors pass through untouched.
// Every refusal is audited (REMOTE_LLM_PROXY_REFUSED) without the token or key, bounded per source
// (services/audit.ts): refusals without a valid token per client address, the others per session and reason
// (a CLI retrying a stopped session's token or a call over quota cannot flood the audit log).
// A failed call's fact goes on the caller's agent session for the autonomous runner
// (db/repositories/session-provider-errors.ts, domain/proxy/session-call-errors.ts): the class of a
// relayed provider error, and our own two quota refusals (quota_exceeded, quota_check_failed) once the
// token has passed every check (a refused, revoked or unverified token records nothing). Fire and
// forget, never on the path of a successful call.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express, Request } from 'express';
import type { ProxyCallContext } from '../../../db/repositories/proxy-tokens.ts';
import { sessionProviderErrors } from '../../../db/repositories/session-provider-errors.ts';
import { isGatewayKey } from '../../../domain/gateway-keys.ts';
import {
  DEFAULT_PROVIDER_BASE_URLS,
  isKeyProvider,
  type KeyProvider,
} from '../../../domain/key-providers.ts';
import { type EndpointMatch, matchBareEndpoint, matchEndpoint } from '../../../domain/proxy/endpoints.ts';
import { formatProxyPath, normaliseProxyPath } from '../../../domain/proxy/request-path.ts';
import type { SessionCallError } from '../../../domain/proxy/session-call-errors.ts';
import {
  dimensionName,
  type QuotaExceeded,
  quotaExceededMessage,
  refusalPeriod,
  secondsUntilPeriodEnd,
} from '../../../domain/quota.ts';
import { writeAudit } from '../../../services/audit.ts';
import { contentFilterFor } from '../../../services/content-filter.ts';
import type { AppDeps } from '../../../services/deps.ts';
import { egressGuardFor } from '../../../services/egress/guard.ts';
import { callAccounting } from '../../../services/proxy/call-accounting.ts';
import {
  type ProxyTokenRefusal,
  proxyCallRefusal,
  proxyTokenService,
} from '../../../services/proxy-tokens.ts';
import { type QuotaSubject, quotaServiceFor, type Reservation } from '../../../services/quota.ts';
import { storedKeyCipher } from '../../../services/stored-keys.ts';
import { type ForwardResult, forwardToProvider } from '../../llm-proxy/forward.ts';
import { type GatewayCaller, gatewayCallers } from '../../llm-proxy/gateway-caller.ts';
import { providerAuthHeaders } from '../../llm-proxy/provider-auth.ts';
import { type ProxyErrorType, sendProxyError } from '../../llm-proxy/proxy-error.ts';
import { readRequestBody } from '../../llm-proxy/stream-usage-rewrite.ts';
import { setNoSniff } from '../../middleware/nosniff.ts';

export const LLM_PROXY_PREFIX = '/api/remote/llm-proxy';

const REQUEST_ID = /^[\w.-]{1,64}$/;
const METRIC_ROUTE = `${LLM_PROXY_PREFIX}/*`;
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

/** A request as the proxy sees it: Node's, before Express has touched it (see mountLlmProxy). */
type ProxyRequest = IncomingMessage & { id?: unknown };

/** The caller's proxy token, from the places the providers' official clients put their key. */
export function proxyTokenOf(req: IncomingMessage): string | undefined {
  const h = req.headers;
  const authorization = h.authorization;
  if (authorization) {
    const bearer = bearerToken(authorization);
    if (bearer !== undefined) return bearer;
  }
  const apiKey = h['x-api-key'];
  if (typeof apiKey === 'string' && apiKey.trim()) return apiKey.trim();
  const googKey = h['x-goog-api-key'];
  if (typeof googKey === 'string' && googKey.trim()) return googKey.trim();
  const url = req.url ?? '';
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

/** `/api/remote/llm-proxy`, alone or followed by `/...` or `?...` (matched as Express would, any case). */
const PROXY_PATH = /^\/api\/remote\/llm-proxy(?:[/?]|$)/i;

/**
 * Mounts the proxy AHEAD of Express: calls under the prefix go straight from Node's HTTP server to
 * the handler, before Express dispatches. Measured (bench/proxy): letting Express dispatch a call
 * (its req/res prototype swap, router, the metrics and pino-http middleware) cost about 190 us of CPU
 * per call, more than the whole forwarding itself, and kept throughput at 0.4 of the pass-through
 * baseline. The handler therefore brings what those middlewares gave: a request id, the request
 * metric and an access log line (`finished`); refusals are audited like any other route's (with the
 * client address Express computes).
 */
export function mountLlmProxy(app: Express, deps: AppDeps): void {
  const handler = llmProxyHandler(deps, app);
  // Express 5 applications call app.handle(req, res, next) for every request (express/lib/express.js).
  type Handle = (req: IncomingMessage, res: ServerResponse, next?: unknown) => void;
  const inner = app as unknown as { handle: Handle };
  const expressHandle = inner.handle.bind(app);
  inner.handle = (req, res, next) => {
    if (PROXY_PATH.test(req.url ?? '')) return handler(req, res);
    return expressHandle(req, res, next);
  };
}

export function llmProxyHandler(deps: AppDeps, app?: Express) {
  // A token's call context is cached per instance once a call made with it was answered
  // (services/proxy/call-context-cache.ts): revocation is pushed to every instance, other changes are
  // seen within the TTL.
  const tokens = proxyTokenService({
    ...deps,
    contextCache: {
      max: deps.settings.SVC_PROXY_CONTEXT_CACHE_SIZE,
      ttlMs: deps.settings.SVC_PROXY_CONTEXT_CACHE_TTL_MS,
    },
  });
  const quota = quotaServiceFor(deps);
  const accounting = callAccounting(deps);
  const providerErrors = sessionProviderErrors(deps.database);
  const contentFilter = contentFilterFor(deps);
  const cipher = storedKeyCipher(deps.settings);
  // Personal gateway keys (issue 29): resolved in api/llm-proxy/gateway-caller.ts, then the same path.
  const gateway = gatewayCallers(deps);
  // Keys a tenant admin wrote connect through the egress guard (a system admin's keys never do).
  const egress = egressGuardFor(deps.settings);
  // PostgreSQL: a round trip each, so the reservation overlaps the context read. SQLite runs them
  // in-process in microseconds; there the reservation waits for the verdict and a refused token
  // never writes.
  const overlapReservation = deps.database.dialect === 'postgres';

  // Calls take their request from this instance's quota lease while the quota has room for several
  // leases (services/quota/leases.ts): no statement before forwarding; exact reservations near a limit.
  const lease = {
    requests: deps.settings.SVC_QUOTA_LEASE_REQUESTS,
    tokens: deps.settings.SVC_QUOTA_LEASE_TOKENS,
  };

  async function reserve(subject: QuotaSubject): Promise<ReserveOutcome> {
    try {
      const r = await quota.reserveCall(subject, lease);
      return r.ok ? { kind: 'ok', reservation: r.reservation } : { kind: 'exceeded', exceeded: r.exceeded };
    } catch (error) {
      deps.logger.error({ err: (error as Error).message }, 'llm-proxy: quota check failed; call refused');
      return { kind: 'failed' };
    }
  }

  function release(outcome: ReserveOutcome | undefined) {
    if (outcome?.kind === 'ok') void quota.release(outcome.reservation);
  }

  /**
   * A failed call's fact on the caller's session, for the autonomous runner (errors and refusals
   * only). Awaited before the error is sent (refusals here, provider errors through the relay's
   * `onProviderError`), so a CLI that exits on the error never beats its record.
   */
  function recordCallError(
    call: ProxyCallContext,
    fact: SessionCallError,
    gw?: GatewayCaller,
  ): Promise<void> {
    if (gw !== undefined) return Promise.resolve(); // a gateway key's call has no session
    return providerErrors
      .record(call.tenantId, call.sessionId, fact, deps.now())
      .catch((error) =>
        deps.logger.warn(
          { err: (error as Error).message },
          'llm-proxy: failed call not recorded on the session',
        ),
      );
  }

  /** The request as an Express request (for writeAudit's client address); refusals only. */
  function asExpressRequest(req: ProxyRequest): Request {
    if (app !== undefined && Object.getPrototypeOf(req) !== app.request) {
      Object.setPrototypeOf(req, app.request);
      (req as unknown as { app: Express }).app = app;
    }
    return req as Request;
  }

  /** The warm-up a CLI sends to its base URL before the first call: answered, not forwarded or audited. */
  function warmUp(req: ProxyRequest, res: ServerResponse, started: number): boolean {
    const method = req.method;
    if (method !== 'HEAD' && method !== 'OPTIONS') return false;
    const rest = pathOnly((req.url ?? '').slice(LLM_PROXY_PREFIX.length));
    if (rest !== '' && rest !== '/') return false;
    const headers = { allow: 'POST, HEAD, OPTIONS', 'x-request-id': String(req.id) };
    res.writeHead(method === 'HEAD' ? 200 : 204, headers).end();
    finished(req, method === 'HEAD' ? 200 : 204, started, undefined, () => ({}), 'llm-proxy: warm-up');
    return true;
  }

  async function refuse(
    req: ProxyRequest,
    res: ServerResponse,
    started: number,
    r: Refusal,
    who: {
      claims?: { sid: string; uid: number; tid: number | null; prv: string; typ?: string };
      ctx?: ProxyCallContext;
    },
  ) {
    await writeAudit(deps, asExpressRequest(req), {
      action: 'REMOTE_LLM_PROXY_REFUSED',
      resourceType: who.claims?.typ === 'gateway' ? 'gateway_key' : 'agent_session',
      resourceId: who.claims?.sid,
      success: false,
      severity: 'warning',
      // A validly signed token names its session: bound the caller's repeats per session and reason.
      ...(who.claims ? { rateLimitKey: `${who.claims.sid}:${r.reason}` } : {}),
      userId: who.claims?.uid ?? null,
      tenantId: who.ctx?.tenantId ?? who.claims?.tid ?? null,
      username: who.ctx?.username ?? null,
      details: {
        reason: r.reason,
        status: r.status,
        ...(who.claims ? { provider: who.claims.prv } : {}),
        path: pathOnly((req.url ?? '').slice(LLM_PROXY_PREFIX.length)) || '/',
        ...r.details,
      },
    });
    sendProxyError(res, r.status, r.type, r.message, { ...r.headers, 'x-request-id': String(req.id) });
    finished(
      req,
      r.status,
      started,
      undefined,
      () => ({ reason: r.reason, session_id: who.claims?.sid }),
      `llm-proxy: refused (${r.reason})`,
    );
  }

  /** A gateway key's caller, or undefined once its refusal was answered. */
  async function resolveGateway(
    req: ProxyRequest,
    res: ServerResponse,
    started: number,
    key: string,
  ): Promise<GatewayCaller | undefined> {
    let r: Awaited<ReturnType<typeof gateway.resolve>>;
    try {
      r = await gateway.resolve(key, req.headers['user-agent']);
    } catch (error) {
      deps.logger.error(
        { err: (error as Error).message },
        'llm-proxy: gateway key check failed; call refused',
      );
      const message = 'The proxy could not check the gateway key; try again';
      await refuse(
        req,
        res,
        started,
        { status: 503, type: 'quota_check_failed', message, reason: 'check_failed' },
        {},
      );
      return undefined;
    }
    if (r.ok) return r.caller;
    const claims = r.who ? { ...r.who, typ: 'gateway' } : undefined;
    await refuse(
      req,
      res,
      started,
      { status: r.status, type: 'proxy_auth_error', message: r.message, reason: r.reason },
      { claims },
    );
    return undefined;
  }

  async function handle(req: ProxyRequest, res: ServerResponse, started: number): Promise<void> {
    if (warmUp(req, res, started)) return;
    const path = (req.url ?? '').slice(LLM_PROXY_PREFIX.length);
    const token = proxyTokenOf(req);
    if (token === undefined) {
      return refuse(
        req,
        res,
        started,
        { status: 401, type: 'proxy_auth_error', message: TOKEN_MESSAGES.missing, reason: 'missing_token' },
        {},
      );
    }
    // A personal gateway key is resolved first (its own module); the path below is then shared.
    let gw: GatewayCaller | undefined;
    if (isGatewayKey(token)) {
      const resolved = await resolveGateway(req, res, started, token);
      if (resolved === undefined) return;
      gw = resolved;
    }
    const sig = gw ? ({ ok: true, claims: gw.claims } as const) : tokens.verifySignature(token);
    if (!sig.ok || !isKeyProvider(sig.claims.prv)) {
      const reason = sig.ok ? 'malformed' : sig.reason;
      return refuse(
        req,
        res,
        started,
        { status: 401, type: 'proxy_auth_error', message: TOKEN_MESSAGES[reason], reason },
        // Claims of a token whose signature failed are not trusted enough to name anyone.
        { claims: sig.ok ? sig.claims : undefined },
      );
    }
    const claims = sig.claims;
    const provider = claims.prv as KeyProvider;
    // The path is decoded and normalised once; the allow-list and the upstream request both use this.
    const normalised = normaliseProxyPath(path);
    if (!normalised.ok) {
      return refuse(
        req,
        res,
        started,
        { status: 400, type: 'proxy_error', message: normalised.message, reason: 'bad_path' },
        { claims },
      );
    }
    const bare = normalised.path.segments.length === 0;
    if (bare && req.method !== 'POST') {
      sendProxyError(res, 405, 'proxy_error', `Use POST ${LLM_PROXY_PREFIX}, or ${LLM_PROXY_PREFIX}/<path>`, {
        allow: 'POST',
        'x-request-id': String(req.id),
      });
      finished(req, 405, started, undefined, () => ({}), 'llm-proxy: method not allowed');
      return;
    }
    // Only allow-listed endpoints are forwarded (domain/proxy/endpoints.ts). The bare endpoint's is
    // the stored base URL's own path, known once the key is read.
    let endpoint: EndpointMatch | undefined;
    if (!bare) {
      endpoint = matchEndpoint(provider, req.method ?? '', normalised.path.segments);
      if (endpoint.kind !== 'allowed')
        return refuse(req, res, started, endpointRefusal(endpoint), { claims });
    }

    // Every forwarded call takes one request from the quota (reserve() never rejects, so an early
    // reservation is always awaited and released on refusal).
    const early =
      overlapReservation && claims.tid !== null && gw === undefined
        ? reserve({ userId: claims.uid, tenantId: claims.tid })
        : undefined;
    let reserved: ReserveOutcome | undefined;
    let ctx: ProxyCallContext | undefined;
    let readAt: number | undefined;
    try {
      ({ ctx, generation: readAt } = gw
        ? { ctx: gw.call, generation: undefined }
        : await tokens.cachedCallContext(claims));
      reserved = await early;
    } catch (error) {
      release(await early);
      deps.logger.error({ err: (error as Error).message }, 'llm-proxy: token check failed; call refused');
      return refuse(
        req,
        res,
        started,
        {
          status: 503,
          type: 'quota_check_failed',
          message: 'The proxy could not check the token and quota; try again',
          reason: 'check_failed',
        },
        { claims },
      );
    }

    const refusal = gw ? null : proxyCallRefusal(claims, ctx, deps.now());
    if (refusal !== null) {
      release(reserved);
      const forbidden = refusal === 'user_inactive' || refusal === 'tenant_inactive';
      return refuse(
        req,
        res,
        started,
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
        started,
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

    const upstreamBase = call.key.baseUrl ?? DEFAULT_PROVIDER_BASE_URLS[provider];
    if (bare) {
      endpoint = matchBareEndpoint(provider, safePathname(upstreamBase));
      if (endpoint.kind !== 'allowed') {
        release(reserved);
        return refuse(req, res, started, endpointRefusal(endpoint), { claims, ctx });
      }
    }
    const allowed = (endpoint as Extract<EndpointMatch, { kind: 'allowed' }>).endpoint;

    if (reserved === undefined) reserved = await reserve({ userId: call.userId, tenantId: call.tenantId });
    if (reserved?.kind === 'failed') {
      await recordCallError(call, 'quota_check_failed', gw);
      return refuse(
        req,
        res,
        started,
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
      await recordCallError(call, 'quota_exceeded', gw);
      return refuse(
        req,
        res,
        started,
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
        started,
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

    // Content filter (services/content-filter.ts): null synchronously, from the cache, unless the
    // tenant's filter is on with an enabled block rule; only then is the body read whole (once: it is
    // forwarded from that buffer, with its one JSON parse) and its user/prompt text checked first.
    let heldBody: Buffer | undefined;
    let heldJson: unknown;
    const screen = contentFilter.proxyScreen(call.tenantId);
    const blockRules = screen instanceof Promise ? await screen : screen;
    if (blockRules !== null) {
      const held = await readRequestBody(req);
      if (!held.ok) {
        release(reserved);
        if (held.reason === 'aborted') return;
        return refuse(
          req,
          res,
          started,
          {
            status: 413,
            type: 'proxy_error',
            message: 'Request body too large (limit 50 MB)',
            reason: 'too_large',
          },
          { claims, ctx },
        );
      }
      const { matches, parsed } = contentFilter.screenProxyBody(blockRules, held.body, call.tenantId);
      if (matches.length > 0) {
        release(reserved);
        return refuse(
          req,
          res,
          started,
          {
            status: 403,
            type: 'content_filtered',
            message: 'The prompt was blocked by the content filter',
            reason: 'content_filtered',
            headers: NO_RETRY,
            details: { rule_ids: matches.map((m) => m.rule_id) },
          },
          { claims, ctx },
        );
      }
      heldBody = held.body;
      heldJson = parsed;
    }

    const reservation = reserved?.kind === 'ok' ? reserved.reservation : undefined;
    const metering = allowed.metering;
    // A gateway key's own limits, inside its owner's quota (after it: the key's counters are only
    // taken for a call the quota let through).
    let keySettle: ((tokens: number, counted: boolean) => Promise<void>) | undefined;
    if (gw !== undefined && reservation !== undefined) {
      const limits = await gateway.keys.reserveKeyLimits(gw.key, reservation.periods).catch(() => undefined);
      if (limits === undefined || 'refused' in limits) {
        release(reserved);
        const failed = limits === undefined;
        return refuse(
          req,
          res,
          started,
          {
            status: failed ? 503 : 429,
            type: failed ? 'quota_check_failed' : 'quota_exceeded',
            message: failed ? "The gateway key's limits could not be checked; try again" : limits.refused,
            reason: failed ? 'quota_check_failed' : 'key_limit_exceeded',
            headers: failed
              ? undefined
              : { ...NO_RETRY, 'retry-after': String(secondsUntilPeriodEnd('daily', deps.now())) },
          },
          { claims, ctx },
        );
      }
      keySettle = limits.settle;
    }

    forwardToProvider({
      req,
      res,
      upstreamBase,
      path: formatProxyPath(normalised.path),
      providerAuth: providerAuthHeaders(provider, apiKey),
      provider,
      wireFormat: metering.kind === 'tokens' ? metering.format : null,
      addsStreamUsage: allowed.addsStreamUsage,
      heldBody,
      heldJson,
      egress: call.key.createdBySystemAdmin ? undefined : egress,
      // A relayed provider error: its class goes on the session before the caller sees the error
      // (error responses only, off the success path) for the autonomous runner
      // (db/repositories/session-provider-errors.ts).
      onProviderError: (cls) => recordCallError(call, cls, gw),
      onDone: (result: ForwardResult) => {
        // One assistant response = one request (spec rule 3): the provider answered 2xx, even if the
        // caller left before the end. Anything else gives the reservation back.
        const counted = result.status >= 200 && result.status < 300;
        // A context read from the database is cached once a call made with it was answered.
        if (counted && readAt !== undefined) tokens.rememberCallContext(claims, call, readAt);
        if (gw !== undefined) {
          void keySettle?.(counted ? (result.usage?.totalTokens ?? 0) : 0, counted).catch(() => {});
          if (counted) gateway.keys.touch(gw.key);
        }
        // The settle and the assistant row: one fact handed over, written off this path.
        if (reservation !== undefined)
          accounting.finished({
            reservation,
            counted,
            usage: result.usage,
            sessionId: gw ? null : call.sessionId,
            toolName: call.toolName ?? 'remote',
            hostName: call.hostName ?? 'localhost',
            userId: call.userId,
            username: call.username,
            requestId: String(req.id),
            provider,
            endpoint: allowed.pattern,
            at: deps.now(),
            ...(gw ? { source: 'gateway' as const } : {}),
          });
        const unreadable = counted && metering.kind === 'tokens' && result.usage === null;
        const estimated = result.usage?.estimated === true;
        finished(
          req,
          result.status,
          started,
          unreadable || result.upstreamError !== undefined ? 'warn' : estimated ? 'info' : undefined,
          () => ({
            session_id: call.sessionId,
            provider,
            endpoint: allowed.pattern,
            wire_format: result.wireFormat,
            tokens: result.usage?.totalTokens ?? null,
            ...(estimated ? { estimated: true } : {}),
            partial: result.usagePartial,
            aborted: result.aborted,
            upstream_error: result.upstreamError,
            ...(unreadable ? { usage_error: result.usageError } : {}),
          }),
          unreadable
            ? 'llm-proxy: usage could not be read; counted as one request with unknown tokens'
            : estimated
              ? 'llm-proxy: stream reported no usage; tokens estimated from its text'
              : 'llm-proxy: call finished',
        );
      },
    });
  }

  /**
   * The proxy's access log line and request metric (it is mounted before pino-http and the metrics
   * middleware): error for 5xx, info for 4xx and for callers that left unanswered, debug otherwise,
   * like pino-http; `details` is only built when the line is written. The path is logged without
   * its query (Gemini clients put keys there).
   */
  function finished(
    req: ProxyRequest,
    status: number,
    started: number,
    level: 'warn' | 'info' | undefined,
    details: () => Record<string, unknown>,
    message: string,
  ) {
    const seconds = (performance.now() - started) / 1000;
    deps.metrics.httpDuration.observe(
      { method: req.method, route: METRIC_ROUTE, status: String(status) },
      seconds,
    );
    // Status 0: the caller left before any answer (its own choice, not a failure of ours).
    const lvl = level ?? (status >= 500 ? 'error' : status >= 400 || status === 0 ? 'info' : 'debug');
    if (!deps.logger.isLevelEnabled(lvl)) return;
    deps.logger[lvl](
      {
        req: { id: req.id, method: req.method, url: pathOnly(req.url ?? '') },
        res: { statusCode: status },
        responseTime: Math.round(seconds * 1000),
        ...details(),
      },
      message,
    );
  }

  return (req: ProxyRequest, res: ServerResponse): void => {
    const started = performance.now();
    req.id = requestIdOf(req);
    setNoSniff(res);
    handle(req, res, started).catch((error) => {
      deps.logger.error(
        { err: (error as Error)?.message, req: { id: req.id } },
        'llm-proxy: unexpected failure',
      );
      sendProxyError(res, 500, 'proxy_error', 'The proxy failed to handle the request', {
        'x-request-id': String(req.id),
      });
    });
  };
}

/** 404 for a path that is not on the allow-list, 403 for one refused on purpose (batches, files). */
function endpointRefusal(match: EndpointMatch): Refusal {
  if (match.kind === 'refused') {
    return {
      status: 403,
      type: 'proxy_error',
      message: match.message,
      reason: 'endpoint_refused',
      headers: NO_RETRY,
      details: { endpoint: match.endpoint.pattern },
    };
  }
  return {
    status: 404,
    type: 'proxy_error',
    message: 'The proxy does not forward this endpoint (see the list of allowed endpoints in the README)',
    reason: 'endpoint_not_allowed',
    headers: NO_RETRY,
  };
}

/** `Bearer <token>` (scheme in any case, one token without inner whitespace); plain string work. */
function bearerToken(authorization: string): string | undefined {
  if (authorization.length < 8 || authorization.slice(0, 6).toLowerCase() !== 'bearer') return undefined;
  const rest = authorization.slice(6);
  const token = rest.trim();
  const separated = rest.charCodeAt(0) === 0x20 || rest.charCodeAt(0) === 0x09;
  if (!separated || token === '' || /\s/.test(token)) return undefined;
  return token;
}

/** The caller's x-request-id when it is a plain token, else a new one (the same rule as pino-http's). */
function requestIdOf(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
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
