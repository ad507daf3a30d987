// Issues, rotates, revokes and verifies proxy tokens. The token is signed (domain/crypto/proxy-token.ts)
// and its jti recorded, so it can be revoked; verification checks signature, record, expiry and the
// session's lifecycle state. Callers pass the token on to the agent and never log or persist it.
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Settings } from '../bin/settings.ts';
import type { DatabaseHandle } from '../db/client.ts';
import { proxyTokensRepository } from '../db/repositories/proxy-tokens.ts';
import { type ProxyTokenClaims, proxyTokenTtlSeconds, signProxyToken, verifyProxyTokenSignature } from '../domain/crypto/proxy-token.ts';
import { proxyTokenSecret } from './secrets.ts';

export type ProxyTokenRefusal = 'malformed' | 'bad_signature' | 'expired' | 'unknown' | 'revoked' | 'session_inactive';

export interface IssueRequest {
  sessionId: string;
  userId: number;
  tenantId: number | null;
  provider: string;
  /** `general` (4 h) or `ha_pool` (15 min) by default; see proxyTokenTtlSeconds. */
  sessionType?: string;
}

/** Session states in which a proxy token may be used (a paused session's CLI is frozen anyway). */
const LIVE_SESSION_STATES = new Set(['active', 'paused']);

export function proxyTokenService(deps: {
  database: DatabaseHandle;
  settings: Pick<Settings, 'SVC_ENCRYPTION_KEY' | 'SECRET_KEY' | 'production'>;
  now: () => Date;
  ttlOverrides?: Record<string, number>;
}) {
  const repo = proxyTokensRepository(deps.database);
  const secret = proxyTokenSecret(deps.settings);
  const { db, t } = deps.database;

  async function issue(req: IssueRequest): Promise<{ token: string; jti: string; expiresAt: Date }> {
    const type = req.sessionType ?? 'general';
    const now = deps.now();
    const iat = Math.floor(now.getTime() / 1000);
    const exp = iat + proxyTokenTtlSeconds(type, deps.ttlOverrides);
    const jti = randomUUID();
    await repo.record({
      jti,
      sessionId: req.sessionId,
      userId: req.userId,
      tenantId: req.tenantId,
      provider: req.provider,
      sessionType: type,
      issuedAt: now,
      expiresAt: new Date(exp * 1000),
    });
    const token = signProxyToken({ jti, sid: req.sessionId, uid: req.userId, tid: req.tenantId, prv: req.provider, iat, exp, typ: type }, secret);
    return { token, jti, expiresAt: new Date(exp * 1000) };
  }

  return {
    issue,
    /** Revokes the session's live tokens (reason `rotated`) and issues a fresh one. */
    async rotate(req: IssueRequest) {
      await repo.revokeForSession(req.sessionId, 'rotated', deps.now());
      return issue(req);
    },
    revokeForSession: (sessionId: string, reason: 'stopped' | 'completed' | 'rotated' | 'aborted') =>
      repo.revokeForSession(sessionId, reason, deps.now()),
    async verify(token: string): Promise<{ ok: true; claims: ProxyTokenClaims } | { ok: false; reason: ProxyTokenRefusal }> {
      const now = deps.now();
      const sig = verifyProxyTokenSignature(token, secret, Math.floor(now.getTime() / 1000));
      if (!sig.ok) return sig;
      const record = await repo.find(sig.claims.jti);
      if (!record || record.sessionId !== sig.claims.sid) return { ok: false, reason: 'unknown' };
      if (record.revokedAt) return { ok: false, reason: 'revoked' };
      if (record.expiresAt.getTime() <= now.getTime()) return { ok: false, reason: 'expired' };
      const [session] = await db
        .select({ status: t.agentSessions.status })
        .from(t.agentSessions)
        .where(eq(t.agentSessions.sessionId, sig.claims.sid));
      if (!session || !LIVE_SESSION_STATES.has(session.status)) return { ok: false, reason: 'session_inactive' };
      return { ok: true, claims: sig.claims };
    },
  };
}

export type ProxyTokenService = ReturnType<typeof proxyTokenService>;
