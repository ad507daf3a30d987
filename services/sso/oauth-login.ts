// OAuth2 / OpenID Connect login with openid-client v6: the authorization-code flow with PKCE (S256).
//
// Start: a fresh PKCE verifier and (OIDC) nonce are stored server-side with the login state
// (login-state.ts: single use, 10 minutes); the browser carries only the opaque state value.
// Callback: the state is consumed first (replayed, expired, unknown or foreign states stop here), then
// openid-client checks the response (state, `iss` when the server advertises it), redeems the code with
// the verifier and, for OIDC, validates the ID token: issuer, audience, expiry/iat, nonce, and, because
// we call enableNonRepudiationChecks, its JWS signature against the provider's JWKS (openid-client skips
// the signature by default, trusting TLS, and administrators may register plain-http internal IdPs).
// Then userinfo: OIDC through fetchUserInfo (its `sub` must equal the ID token's); plain OAuth2 through
// the configured userinfo URL, the subject read from the mapped claim (default `sub`, then `id`).
//
// Configurations are cached per process, keyed by provider id and a hash of its stored config, so a
// changed provider is discovered again; a failed discovery is not cached.
import { createHash } from 'node:crypto';
import type { Request } from 'express';
import * as oidc from 'openid-client';
import { AppError } from '../../domain/errors.ts';
import {
  type AttributeMapping,
  DEFAULT_OIDC_SCOPES,
  type OAuthProviderConfig,
  oauthConfigOf,
} from '../../domain/sso/provider-config.ts';
import type { AppDeps } from '../deps.ts';
import { consumeLoginState, createLoginState, type LoginState, LoginStateError } from './login-state.ts';
import { decryptProviderSecret, type SsoProvider } from './providers.ts';
import type { ExternalIdentity } from './sign-in.ts';

/** Seconds for each request to the identity provider. */
export const PROVIDER_TIMEOUT_SECONDS = 10;
export const SSO_CALLBACK_REFUSED = 'Single sign-on login failed';

/** A refused callback: `reason` goes to the audit record, the client gets the generic message. */
export class OAuthLoginRefusal extends AppError {
  constructor(
    readonly reason: string,
    status = 401,
  ) {
    super(status, SSO_CALLBACK_REFUSED);
  }
}

const configurations = new Map<string, Promise<oidc.Configuration>>();
const MAX_CACHED = 100;

const cacheKey = (p: SsoProvider) =>
  `${p.id}:${createHash('sha256').update(JSON.stringify(p.config)).digest('hex')}`;

const insecure = (url: string) => new URL(url).protocol === 'http:';

async function buildConfiguration(deps: AppDeps, provider: SsoProvider): Promise<oidc.Configuration> {
  const c = oauthConfigOf(provider.config);
  const secret = decryptProviderSecret(deps, c.client_secret_encrypted);
  const execute: ((config: oidc.Configuration) => void)[] = [];
  if (provider.providerType === 'oidc') {
    if (insecure(c.issuer_url!)) execute.push(oidc.allowInsecureRequests);
    const discovered = await oidc.discovery(new URL(c.issuer_url!), c.client_id, secret, undefined, {
      timeout: PROVIDER_TIMEOUT_SECONDS,
      execute,
    });
    const meta = discovered.serverMetadata();
    const methods = meta.token_endpoint_auth_methods_supported;
    // The library defaults to client_secret_post; use basic when the provider supports only that.
    const auth =
      methods && !methods.includes('client_secret_post') && methods.includes('client_secret_basic')
        ? oidc.ClientSecretBasic(secret)
        : oidc.ClientSecretPost(secret);
    const config = new oidc.Configuration(meta, c.client_id, secret, auth);
    config.timeout = PROVIDER_TIMEOUT_SECONDS;
    for (const x of execute) x(config);
    oidc.enableNonRepudiationChecks(config);
    return config;
  }
  const server: oidc.ServerMetadata = {
    issuer: new URL(c.authorization_url!).origin,
    authorization_endpoint: c.authorization_url,
    token_endpoint: c.token_url,
    userinfo_endpoint: c.userinfo_url,
  };
  const config = new oidc.Configuration(server, c.client_id, secret, oidc.ClientSecretPost(secret));
  config.timeout = PROVIDER_TIMEOUT_SECONDS;
  if ([c.authorization_url!, c.token_url!, c.userinfo_url!].some(insecure))
    oidc.allowInsecureRequests(config);
  return config;
}

/** The provider's openid-client Configuration (discovered once per process and provider version). */
export function oauthConfiguration(deps: AppDeps, provider: SsoProvider): Promise<oidc.Configuration> {
  const key = cacheKey(provider);
  let hit = configurations.get(key);
  if (!hit) {
    for (const k of configurations.keys()) if (k.startsWith(`${provider.id}:`)) configurations.delete(k);
    if (configurations.size >= MAX_CACHED) configurations.delete(configurations.keys().next().value!);
    hit = buildConfiguration(deps, provider);
    configurations.set(key, hit);
    hit.catch(() => configurations.delete(key));
  }
  return hit;
}

/** Starts a login: stores the state; returns the provider's authorization URL and the raw state. */
export async function startOAuthLogin(
  deps: AppDeps,
  provider: SsoProvider,
  returnTo: string,
): Promise<{ url: string; state: string }> {
  const c = oauthConfigOf(provider.config);
  const config = await oauthConfiguration(deps, provider).catch((err: unknown) => {
    throw new OAuthLoginRefusal(`discovery_failed: ${errorCode(err)}`, 502);
  });
  const isOidc = provider.providerType === 'oidc';
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const nonce = isOidc ? oidc.randomNonce() : undefined;
  const state = await createLoginState(deps, {
    providerName: provider.name,
    kind: isOidc ? 'oidc' : 'oauth2',
    nonce,
    codeVerifier,
    returnTo,
  });
  const scopes = c.scopes?.length ? c.scopes : isOidc ? DEFAULT_OIDC_SCOPES : [];
  const params: Record<string, string> = {
    response_type: 'code',
    redirect_uri: c.redirect_uri,
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    state,
  };
  if (scopes.length)
    params.scope = (isOidc && !scopes.includes('openid') ? ['openid', ...scopes] : scopes).join(' ');
  if (nonce) params.nonce = nonce;
  return { url: oidc.buildAuthorizationUrl(config, params).href, state };
}

const errorCode = (err: unknown): string => {
  const e = err as { code?: unknown; error?: unknown; name?: unknown };
  const parts = [e?.name, e?.code, e?.error].filter((x) => typeof x === 'string') as string[];
  return parts.join('/').slice(0, 120) || 'error';
};

const claim = (claims: Record<string, unknown>, name: string | undefined): unknown =>
  name === undefined ? undefined : claims[name];
const str = (v: unknown): string | undefined =>
  typeof v === 'string' && v.length > 0
    ? v
    : typeof v === 'number' && Number.isFinite(v)
      ? String(v)
      : undefined;

/**
 * Handles the callback: consumes the state, redeems the code and reads the identity. Throws
 * LoginStateError (400) or OAuthLoginRefusal (401/502) carrying the audit reason.
 */
export async function completeOAuthLogin(
  deps: AppDeps,
  req: Request,
  provider: SsoProvider,
  opts: { browserBound: (rawState: string) => boolean },
): Promise<{ identity: ExternalIdentity; state: LoginState }> {
  const c: OAuthProviderConfig = oauthConfigOf(provider.config);
  const query = req.query as Record<string, unknown>;
  if (typeof query.error === 'string')
    throw new OAuthLoginRefusal(`provider_error: ${query.error.slice(0, 60)}`);
  const rawState = typeof query.state === 'string' ? query.state : '';
  if (!rawState) throw new LoginStateError('unknown_state');
  if (!opts.browserBound(rawState)) throw new LoginStateError('browser_binding_mismatch');
  const state = await consumeLoginState(deps, provider.name, rawState);
  const isOidc = provider.providerType === 'oidc';
  if (state.kind !== provider.providerType) throw new LoginStateError('state_other_provider');

  const config = await oauthConfiguration(deps, provider).catch((err: unknown) => {
    throw new OAuthLoginRefusal(`discovery_failed: ${errorCode(err)}`, 502);
  });
  // The URL the provider redirected to: our registered redirect_uri with the query as received, so a
  // forged Host header cannot change what is compared.
  const original = req.originalUrl ?? req.url;
  const q = original.indexOf('?');
  const currentUrl = new URL(c.redirect_uri);
  currentUrl.search = q >= 0 ? original.slice(q) : '';

  let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
  try {
    tokens = await oidc.authorizationCodeGrant(config, currentUrl, {
      pkceCodeVerifier: state.codeVerifier ?? undefined,
      expectedState: rawState,
      ...(isOidc ? { expectedNonce: state.nonce ?? undefined, idTokenExpected: true } : {}),
    });
  } catch (err) {
    throw new OAuthLoginRefusal(`token_exchange_failed: ${errorCode(err)}`);
  }

  const mapping: AttributeMapping = c.attribute_mapping ?? {};
  let claims: Record<string, unknown>;
  let subject: string | undefined;
  if (isOidc) {
    const idClaims = tokens.claims();
    if (!idClaims) throw new OAuthLoginRefusal('id_token_missing');
    let userinfo: Record<string, unknown> = {};
    try {
      userinfo = (await oidc.fetchUserInfo(config, tokens.access_token, idClaims.sub)) as Record<
        string,
        unknown
      >;
    } catch (err) {
      throw new OAuthLoginRefusal(`userinfo_failed: ${errorCode(err)}`);
    }
    claims = { ...userinfo, ...idClaims };
    subject = idClaims.sub;
  } else {
    try {
      const res = await oidc.fetchProtectedResource(
        config,
        tokens.access_token,
        new URL(c.userinfo_url!),
        'GET',
      );
      if (!res.ok) throw new Error(`status ${res.status}`);
      const text = await res.text();
      if (text.length > 256 * 1024) throw new Error('userinfo too large');
      const parsed = JSON.parse(text) as unknown;
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
        throw new Error('userinfo not an object');
      claims = parsed as Record<string, unknown>;
    } catch (err) {
      throw new OAuthLoginRefusal(`userinfo_failed: ${errorCode(err)}`);
    }
    subject = str(claim(claims, mapping.subject ?? 'sub')) ?? (mapping.subject ? undefined : str(claims.id));
  }
  if (!subject) throw new OAuthLoginRefusal('subject_missing');

  const email = str(claim(claims, mapping.email ?? 'email'));
  const verifiedClaim = claim(claims, mapping.email_verified ?? 'email_verified');
  const emailVerified = isOidc ? verifiedClaim === true : c.trust_email === true;
  const expiresIn = tokens.expiresIn();
  return {
    state,
    identity: {
      provider,
      subject,
      email: email ?? null,
      emailVerified,
      username: str(claim(claims, mapping.username ?? 'preferred_username')) ?? null,
      displayName: str(claim(claims, mapping.name ?? 'name')) ?? null,
      providerTokens: {
        accessToken: tokens.access_token,
        refreshToken: tokens.refresh_token,
        expiresAt: expiresIn !== undefined ? new Date(deps.now().getTime() + expiresIn * 1000) : undefined,
      },
    },
  };
}
