// The only SQL of compliance reads outside audit_logs' own repository: usage per day, the user list
// of an access review, and the counts behind the security score (domain/compliance/security-score.ts),
// each inside a read scope (rawScopeCondition: system administrators all tenants, others their own).
import type { ReadScope } from '../../../domain/tenant-scope.ts';
import type { DatabaseHandle } from '../../client.ts';
import { rawScopeCondition } from '../../tenant-scope-sql.ts';
import { REQUESTS_OF } from '../usage/read-requests.ts';

const ADMIN_ROLES = "('platform_admin', 'tenant_admin', 'admin')";

export function complianceSignalsRepository({ sql }: DatabaseHandle) {
  const num = (v: unknown) => Number(v ?? 0);
  /** `1 = 1` for every tenant, `false` for nothing visible. */
  const cond = (scope: ReadScope, column: string) => {
    const c = rawScopeCondition(scope, column);
    if (c === false) return false;
    return c ?? { sql: '1 = 1', params: [] as number[] };
  };
  const count = async (text: string, params: unknown[]) =>
    num((await sql.query<{ n: unknown }>(text, params))[0]?.n);

  return {
    /**
     * Tokens (daily_usage), requests (assistant messages, rule 3) and messages per day over [from, to]
     * (YYYY-MM-DD, inclusive).
     */
    async usageByDay(scope: ReadScope, from: string, to: string) {
      const c = cond(scope, 'tenant_id');
      if (c === false) return [];
      const usage = await sql.query<Record<string, unknown>>(
        `SELECT date, SUM(tokens_used) AS tokens
         FROM daily_usage WHERE ${c.sql} AND date >= ? AND date <= ? GROUP BY date`,
        [...c.params, from, to],
      );
      const messages = await sql.query<Record<string, unknown>>(
        `SELECT date, COUNT(*) AS messages, COUNT(DISTINCT user_id) AS users, ${REQUESTS_OF('daily_messages')} AS requests
         FROM daily_messages WHERE ${c.sql} AND date >= ? AND date <= ? GROUP BY date`,
        [...c.params, from, to],
      );
      const days = new Map<
        string,
        { date: string; tokens: number; requests: number; messages: number; active_users: number }
      >();
      const at = (d: unknown) => {
        const date = String(d);
        const row = days.get(date) ?? { date, tokens: 0, requests: 0, messages: 0, active_users: 0 };
        days.set(date, row);
        return row;
      };
      for (const r of usage) Object.assign(at(r.date), { tokens: num(r.tokens) });
      for (const r of messages)
        Object.assign(at(r.date), {
          messages: num(r.messages),
          active_users: num(r.users),
          requests: num(r.requests),
        });
      return [...days.values()].sort((a, b) => a.date.localeCompare(b.date));
    },

    /** Active users per day over the period (distinct senders in daily_messages). */
    async activeUsersInPeriod(scope: ReadScope, from: string, to: string): Promise<number> {
      const c = cond(scope, 'tenant_id');
      if (c === false) return 0;
      return count(
        `SELECT COUNT(DISTINCT user_id) AS n FROM daily_messages WHERE ${c.sql} AND date >= ? AND date <= ? AND user_id IS NOT NULL`,
        [...c.params, from, to],
      );
    },

    async users(scope: ReadScope) {
      const c = cond(scope, 'tenant_id');
      if (c === false) return [];
      const rows = await sql.query<Record<string, unknown>>(
        `SELECT id, username, role, tenant_id, is_active, last_login_at, created_at FROM users
         WHERE ${c.sql} AND deleted_at IS NULL ORDER BY id`,
        c.params,
      );
      const when = (v: unknown) =>
        v == null ? null : new Date(v instanceof Date ? v : Number(v)).toISOString();
      return rows.map((r) => ({
        user_id: num(r.id),
        username: String(r.username),
        role: String(r.role),
        tenant_id: r.tenant_id == null ? null : num(r.tenant_id),
        is_active: r.is_active === true || r.is_active === 1,
        last_login_at: when(r.last_login_at),
        created_at: when(r.created_at),
      }));
    },

    /** The counts of domain/compliance/security-score.ts. */
    async securitySignals(scope: ReadScope, since: Date, staleBefore: Date) {
      const u = cond(scope, 'tenant_id');
      if (u === false)
        return {
          activeUsers: 0,
          administrators: 0,
          ssoUsers: 0,
          lockouts: 0,
          activeKeys: 0,
          staleKeys: 0,
          proxyRefusals: 0,
          proxyTokensIssued: 0,
        };
      const active = `${u.sql} AND deleted_at IS NULL AND is_active = ?`;
      const yes = sql.dialect === 'sqlite' ? 1 : true;
      const audit = (action: string) =>
        count(`SELECT COUNT(*) AS n FROM audit_logs WHERE ${u.sql} AND action = ? AND timestamp >= ?`, [
          ...u.params,
          action,
          since,
        ]);
      return {
        activeUsers: await count(`SELECT COUNT(*) AS n FROM users WHERE ${active}`, [...u.params, yes]),
        administrators: await count(
          `SELECT COUNT(*) AS n FROM users WHERE ${active} AND role IN ${ADMIN_ROLES}`,
          [...u.params, yes],
        ),
        ssoUsers: await count(
          `SELECT COUNT(*) AS n FROM users WHERE ${active} AND id IN (SELECT user_id FROM sso_identities)`,
          [...u.params, yes],
        ),
        lockouts: await audit('LOGIN_LOCKED'),
        activeKeys: await count(`SELECT COUNT(*) AS n FROM api_key_store WHERE ${u.sql} AND is_active = ?`, [
          ...u.params,
          yes,
        ]),
        staleKeys: await count(
          `SELECT COUNT(*) AS n FROM api_key_store WHERE ${u.sql} AND is_active = ? AND updated_at < ?`,
          [...u.params, yes, staleBefore],
        ),
        proxyRefusals: await audit('REMOTE_LLM_PROXY_REFUSED'),
        proxyTokensIssued: await count(
          `SELECT COUNT(*) AS n FROM proxy_tokens WHERE ${u.sql} AND created_at >= ?`,
          [...u.params, since],
        ),
      };
    },
  };
}
