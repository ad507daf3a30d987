import { and, eq, isNull } from 'drizzle-orm';
import type { DatabaseHandle } from '../client.ts';
import {
  dateOf as date,
  STORED_KEY_COLUMNS,
  type StoredKeyRef,
  storedKeyJoin,
  storedKeyOf,
} from './stored-key-join.ts';

/**
 * Everything the model proxy needs to decide about one call, read in one query: the token's issuance
 * record, its session's state, the user and tenant standing, and the tenant's newest active stored
 * key for the token's provider (ciphertext only).
 */
export interface ProxyCallContext {
  sessionId: string;
  userId: number;
  /** Tenant the token was issued for, else the session's tenant. */
  tenantId: number | null;
  provider: string;
  expiresAt: Date;
  revokedAt: Date | null;
  /** Null when the session row does not exist. */
  sessionStatus: string | null;
  toolName: string | null;
  /** Where usage is recorded: the session's machine's name, else the session's host_name. */
  hostName: string | null;
  /** Null when the user row does not exist. */
  userActive: boolean | null;
  userDeleted: boolean;
  username: string | null;
  /** Null when the tenant row does not exist. */
  tenantName: string | null;
  tenantStatus: string | null;
  tenantDeletedAt: Date | null;
  /** createdBySystemAdmin: false means the proxy connects through the egress guard. */
  key: StoredKeyRef | null;
}

const CALL_CONTEXT = `
SELECT pt.session_id, pt.user_id, COALESCE(pt.tenant_id, s.tenant_id) AS tenant_id, pt.provider, pt.expires_at,
       pt.revoked_at, s.status AS session_status, s.tool_name,
       COALESCE(m.machine_name, s.host_name) AS host_name,
       u.id AS user_row, u.is_active AS user_active, u.deleted_at AS user_deleted_at, u.username,
       tn.name AS tenant_name, tn.status AS tenant_status, tn.deleted_at AS tenant_deleted_at,
       ${STORED_KEY_COLUMNS}
FROM proxy_tokens pt
LEFT JOIN agent_sessions s ON s.session_id = pt.session_id
LEFT JOIN remote_machines m ON m.machine_id = s.remote_machine_id
LEFT JOIN users u ON u.id = pt.user_id
LEFT JOIN tenants tn ON tn.id = COALESCE(pt.tenant_id, s.tenant_id)
${storedKeyJoin('COALESCE(pt.tenant_id, s.tenant_id)', 'pt.provider')}
WHERE pt.jti = ?`;

export function proxyTokensRepository({ db, t, sql }: DatabaseHandle) {
  return {
    async record(values: typeof t.proxyTokens.$inferInsert) {
      await db.insert(t.proxyTokens).values(values);
    },
    async find(jti: string) {
      const [row] = await db.select().from(t.proxyTokens).where(eq(t.proxyTokens.jti, jti));
      return row;
    },
    /** Revokes every live token of a session; returns how many. */
    async revokeForSession(sessionId: string, reason: string, at: Date): Promise<number> {
      const rows = await db
        .update(t.proxyTokens)
        .set({ revokedAt: at, revokedReason: reason })
        .where(and(eq(t.proxyTokens.sessionId, sessionId), isNull(t.proxyTokens.revokedAt)))
        .returning({ jti: t.proxyTokens.jti });
      return rows.length;
    },
    /** The proxy's one read per call (see ProxyCallContext); undefined for an unknown jti. */
    async callContext(jti: string): Promise<ProxyCallContext | undefined> {
      const [r] = await sql.query<Record<string, unknown>>(CALL_CONTEXT, [true, jti], { prepared: true });
      if (!r) return undefined;
      return {
        sessionId: String(r.session_id),
        userId: Number(r.user_id),
        tenantId: r.tenant_id == null ? null : Number(r.tenant_id),
        provider: String(r.provider),
        expiresAt: date(r.expires_at)!,
        revokedAt: date(r.revoked_at),
        sessionStatus: r.session_status == null ? null : String(r.session_status),
        toolName: r.tool_name == null ? null : String(r.tool_name),
        hostName: r.host_name == null ? null : String(r.host_name),
        userActive: r.user_row == null ? null : Boolean(r.user_active),
        userDeleted: r.user_deleted_at != null,
        username: r.username == null ? null : String(r.username),
        tenantName: r.tenant_name == null ? null : String(r.tenant_name),
        tenantStatus: r.tenant_status == null ? null : String(r.tenant_status),
        tenantDeletedAt: date(r.tenant_deleted_at),
        key: storedKeyOf(r),
      };
    },
  };
}
