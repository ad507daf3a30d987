// Server-side state of a started SSO login (OIDC/OAuth2 `state`, SAML `RelayState`): the browser
// carries only an opaque 256-bit random value; the row is found by its SHA-256 hex and holds what the
// callback must check against (the nonce, the PKCE verifier as Fernet ciphertext, the SAML request id)
// and where to send the browser afterwards.
//
// Single use and short-lived: `consumeLoginState` marks the row consumed with one conditional UPDATE
// (consumed_at IS NULL AND expires_at > now AND provider matches), so of two concurrent callbacks
// carrying the same state exactly one wins, and a replayed, expired or foreign state is refused with
// the same generic 400 (the caller audits the precise reason, which is never sent to the client).
import { createHash, randomBytes } from 'node:crypto';
import { and, eq, gt, isNull, lt } from 'drizzle-orm';
import type { DatabaseHandle } from '../../db/client.ts';
import { AppError } from '../../domain/errors.ts';
import type { KeySettings } from '../secrets.ts';
import { openSsoSecret, sealSsoSecret } from './cipher.ts';

export const LOGIN_STATE_TTL_MS = 10 * 60_000;
export const INVALID_LOGIN_STATE = 'Invalid or expired sign-in request; please start again';

export type LoginStateKind = 'oidc' | 'oauth2' | 'saml';

export interface LoginStateDeps {
  database: DatabaseHandle;
  settings: KeySettings;
  now: () => Date;
}

export interface LoginState {
  providerName: string;
  kind: LoginStateKind;
  nonce: string | null;
  /** Decrypted. */
  codeVerifier: string | null;
  samlRequestId: string | null;
  returnTo: string | null;
}

/** Why a state was refused; carried on the error for the caller's audit record, never sent. */
export type LoginStateRefusal =
  | 'unknown_state'
  | 'state_replayed'
  | 'state_expired'
  | 'state_other_provider'
  | 'browser_binding_mismatch';

export class LoginStateError extends AppError {
  constructor(readonly reason: LoginStateRefusal) {
    super(400, INVALID_LOGIN_STATE);
  }
}

export const hashLoginState = (raw: string): string => createHash('sha256').update(raw, 'utf8').digest('hex');

/** Stores a new login state and returns the raw opaque value to put in `state` / `RelayState`. */
export async function createLoginState(
  deps: LoginStateDeps,
  input: {
    providerName: string;
    kind: LoginStateKind;
    nonce?: string;
    codeVerifier?: string;
    samlRequestId?: string;
    returnTo?: string;
  },
): Promise<string> {
  const { db, t } = deps.database;
  const raw = randomBytes(32).toString('base64url');
  const now = deps.now();
  await db.insert(t.ssoLoginStates).values({
    stateHash: hashLoginState(raw),
    providerName: input.providerName,
    kind: input.kind,
    nonce: input.nonce ?? null,
    codeVerifier: input.codeVerifier ? sealSsoSecret(deps, input.codeVerifier) : null,
    samlRequestId: input.samlRequestId ?? null,
    returnTo: input.returnTo ?? null,
    createdAt: now,
    expiresAt: new Date(now.getTime() + LOGIN_STATE_TTL_MS),
  });
  // Housekeeping: the login start is public, so the table must stay bounded by what a short window
  // brings in. A state expired for another 10 minutes is deleted (until then a late callback is still
  // audited as `state_expired` rather than `unknown_state`).
  await db
    .delete(t.ssoLoginStates)
    .where(lt(t.ssoLoginStates.expiresAt, new Date(now.getTime() - LOGIN_STATE_TTL_MS)));
  return raw;
}

/**
 * Consumes a login state (single use). Throws LoginStateError (400, generic text) when the value is
 * unknown, already consumed, expired or was issued for another provider.
 */
export async function consumeLoginState(
  deps: LoginStateDeps,
  providerName: string,
  rawState: string,
): Promise<LoginState> {
  const { db, t } = deps.database;
  const s = t.ssoLoginStates;
  if (typeof rawState !== 'string' || rawState.length === 0 || rawState.length > 200)
    throw new LoginStateError('unknown_state');
  const stateHash = hashLoginState(rawState);
  const now = deps.now();
  const [row] = await db
    .update(s)
    .set({ consumedAt: now })
    .where(
      and(
        eq(s.stateHash, stateHash),
        eq(s.providerName, providerName),
        isNull(s.consumedAt),
        gt(s.expiresAt, now),
      ),
    )
    .returning();
  if (!row) {
    // Say precisely why, for the audit record only.
    const [seen] = await db
      .select({ providerName: s.providerName, consumedAt: s.consumedAt, expiresAt: s.expiresAt })
      .from(s)
      .where(eq(s.stateHash, stateHash));
    if (!seen) throw new LoginStateError('unknown_state');
    if (seen.providerName !== providerName) throw new LoginStateError('state_other_provider');
    if (seen.consumedAt) throw new LoginStateError('state_replayed');
    throw new LoginStateError('state_expired');
  }
  return {
    providerName: row.providerName,
    kind: row.kind as LoginStateKind,
    nonce: row.nonce,
    codeVerifier: row.codeVerifier ? openSsoSecret(deps, row.codeVerifier) : null,
    samlRequestId: row.samlRequestId,
    returnTo: row.returnTo,
  };
}
