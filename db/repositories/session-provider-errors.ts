// The last failed model call of an agent session, as the model proxy saw it
// (agent_sessions.last_provider_error / last_provider_error_at, migration 0028): the class of a
// provider error it relayed, or one of its own quota refusals (domain/proxy/session-call-errors.ts).
// Written by the proxy on error responses and quota refusals only (never on the path of a successful
// call); read by the autonomous runner for the window of one CLI attempt
// (services/autonomous/runner/run-cli.ts), so a CLI that exits without a structured error line is
// still classified from the provider's own error envelope or the proxy's own refusal.
import { and, eq, gte } from 'drizzle-orm';
import { type SessionCallError, sessionCallErrorOf } from '../../domain/proxy/session-call-errors.ts';
import type { DatabaseHandle } from '../client.ts';

export function sessionProviderErrors({ db, t }: Pick<DatabaseHandle, 'db' | 't'>) {
  const s = t.agentSessions;
  return {
    async record(tenantId: number | null, sessionId: string, cls: SessionCallError, at: Date): Promise<void> {
      await db
        .update(s)
        .set({ lastProviderError: cls, lastProviderErrorAt: at })
        .where(
          tenantId === null
            ? eq(s.sessionId, sessionId)
            : and(eq(s.sessionId, sessionId), eq(s.tenantId, tenantId)),
        );
    },
    /** Forgets the session's fact (the start of a runner attempt: an earlier attempt's error is not its). */
    async clear(sessionId: string): Promise<void> {
      await db
        .update(s)
        .set({ lastProviderError: null, lastProviderErrorAt: null })
        .where(eq(s.sessionId, sessionId));
    },
    /** The last recorded class when it was recorded at or after `since`; else null. */
    async since(sessionId: string, since: Date): Promise<SessionCallError | null> {
      const [row] = await db
        .select({ cls: s.lastProviderError })
        .from(s)
        .where(and(eq(s.sessionId, sessionId), gte(s.lastProviderErrorAt, since)));
      return sessionCallErrorOf(row?.cls);
    },
  };
}
