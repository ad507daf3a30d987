// The class of the last provider error the model proxy relayed for an agent session
// (agent_sessions.last_provider_error / last_provider_error_at, migration 0028). Written by the proxy
// on error responses only (never on the path of a successful call); read by the autonomous runner for
// the window of one CLI attempt (services/autonomous/runner/run-cli.ts), so a CLI that exits without a
// structured error line is still classified from the provider's own error envelope.
import { and, eq, gte } from 'drizzle-orm';
import { PROVIDER_ERROR_CLASSES, type ProviderErrorClass } from '../../domain/proxy/provider-errors.ts';
import type { DatabaseHandle } from '../client.ts';

export function sessionProviderErrors({ db, t }: Pick<DatabaseHandle, 'db' | 't'>) {
  const s = t.agentSessions;
  return {
    async record(
      tenantId: number | null,
      sessionId: string,
      cls: ProviderErrorClass,
      at: Date,
    ): Promise<void> {
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
    async since(sessionId: string, since: Date): Promise<ProviderErrorClass | null> {
      const [row] = await db
        .select({ cls: s.lastProviderError })
        .from(s)
        .where(and(eq(s.sessionId, sessionId), gte(s.lastProviderErrorAt, since)));
      const cls = row?.cls ?? null;
      return cls !== null && (PROVIDER_ERROR_CLASSES as readonly string[]).includes(cls)
        ? (cls as ProviderErrorClass)
        : null;
    },
  };
}
