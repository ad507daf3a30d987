// The only SQL for auth sessions (`sessions`). The token column holds the SHA-256 of the session token;
// the raw token exists only in the client's cookie or header.
import { and, eq, ne, sql } from 'drizzle-orm';
import { invalidateAuthSessions } from '../auth-session-cache.ts';
import type { DatabaseHandle } from '../client.ts';

export interface SessionPrincipal {
  sessionId: number;
  expiresAt: Date;
  sessionActive: boolean;
  user: {
    id: number;
    username: string;
    email: string | null;
    role: string;
    tenantId: number | null;
    isActive: boolean;
    deletedAt: Date | null;
    mustChangePassword: boolean;
    createdAt: Date;
  };
  tenant: { status: string; deletedAt: Date | null; name: string } | null;
  extraPermissions: string[];
}

/**
 * The session lookup, prepared once per database: sessions.token is unique, so this is one indexed
 * probe joined with the user, the user's tenant and the user's extra permissions (one row per extra
 * grant). Preparing it skips drizzle's per-call query building, which costs more than the query.
 */
function buildPrincipalQuery({ db, t }: DatabaseHandle) {
  const s = t.sessions;
  const u = t.users;
  return db
    .select({
      sessionId: s.id,
      expiresAt: s.expiresAt,
      sessionActive: s.isActive,
      id: u.id,
      username: u.username,
      email: u.email,
      role: u.role,
      tenantId: u.tenantId,
      isActive: u.isActive,
      deletedAt: u.deletedAt,
      mustChangePassword: u.mustChangePassword,
      createdAt: u.createdAt,
      tenantStatus: t.tenants.status,
      tenantDeletedAt: t.tenants.deletedAt,
      tenantName: t.tenants.name,
      extra: t.userPermissions.permission,
    })
    .from(s)
    .innerJoin(u, eq(u.id, s.userId))
    .leftJoin(t.tenants, eq(t.tenants.id, u.tenantId))
    .leftJoin(t.userPermissions, eq(t.userPermissions.userId, u.id))
    .where(eq(s.token, sql.placeholder('tokenHash')))
    .prepare('auth_session_principal');
}

const prepared = new WeakMap<DatabaseHandle, ReturnType<typeof buildPrincipalQuery>>();
function principalQuery(database: DatabaseHandle) {
  let q = prepared.get(database);
  if (!q) {
    q = buildPrincipalQuery(database);
    prepared.set(database, q);
  }
  return q;
}

export function authSessionsRepository(database: DatabaseHandle) {
  const { db, t } = database;
  const s = t.sessions;
  return {
    async create(values: {
      tokenHash: string;
      userId: number;
      createdAt: Date;
      expiresAt: Date;
      ipAddress: string | null;
      userAgent: string | null;
    }) {
      const [row] = await db
        .insert(s)
        .values({
          token: values.tokenHash,
          userId: values.userId,
          createdAt: values.createdAt,
          expiresAt: values.expiresAt,
          ipAddress: values.ipAddress,
          userAgent: values.userAgent,
        })
        .returning({ id: s.id });
      return row!.id;
    },

    /**
     * One indexed query (sessions.token is unique) joined with the user, the user's tenant and the
     * user's extra permissions (one row per extra grant). Validity is decided by the caller.
     */
    async findByTokenHash(tokenHash: string): Promise<SessionPrincipal | undefined> {
      const rows = await principalQuery(database).execute({ tokenHash });
      const r = rows[0];
      if (!r) return undefined;
      return {
        sessionId: r.sessionId,
        expiresAt: r.expiresAt,
        sessionActive: r.sessionActive,
        user: {
          id: r.id,
          username: r.username,
          email: r.email,
          role: r.role,
          tenantId: r.tenantId,
          isActive: r.isActive,
          deletedAt: r.deletedAt,
          mustChangePassword: r.mustChangePassword,
          createdAt: r.createdAt,
        },
        tenant:
          r.tenantStatus != null
            ? { status: r.tenantStatus, deletedAt: r.tenantDeletedAt, name: r.tenantName ?? '' }
            : null,
        extraPermissions: rows.map((x) => x.extra).filter((p): p is string => p != null),
      };
    },

    async deactivate(sessionId: number): Promise<void> {
      await db.update(s).set({ isActive: false }).where(eq(s.id, sessionId));
      await invalidateAuthSessions(database, { sessionId });
    },

    /** Ends every session of a user, optionally keeping one (the caller's own after a password change). */
    async deactivateAllForUser(userId: number, keepSessionId?: number): Promise<void> {
      const cond =
        keepSessionId !== undefined
          ? and(eq(s.userId, userId), ne(s.id, keepSessionId))
          : eq(s.userId, userId);
      await db
        .update(s)
        .set({ isActive: false })
        .where(and(cond, eq(s.isActive, true)));
      await invalidateAuthSessions(database, { userId });
    },
  };
}
