// The persisted session output buffer (remote_runtime_outputs). event_index is gap-free per session:
// each batch takes max(event_index) + 1.. inside one transaction, and a unique-index conflict with a
// concurrent writer (another API instance) rolls the batch back and retries it with a fresh maximum.
import { and, asc, eq, gte, inArray, max } from 'drizzle-orm';
import type { DatabaseHandle } from '../client.ts';
import { isUniqueViolation } from '../unique-violation.ts';

export type RuntimeOutputRow = DatabaseHandle['t']['remoteRuntimeOutputs']['$inferSelect'];

export interface OutputToAppend {
  stream: string;
  /** JSON text */
  payload: string;
  /** De-duplication key of a re-sent event; null when the event has none. */
  sourceKey: string | null;
  createdAt: Date;
  expiresAt?: Date | null;
}

const MAX_ATTEMPTS = 20;

export function runtimeOutputsRepository(database: DatabaseHandle) {
  const { db, t } = database;
  const o = t.remoteRuntimeOutputs;
  return {
    /** Appends in order; entries whose sourceKey is already stored are skipped. Returns the new rows. */
    async append(sessionId: string, entries: OutputToAppend[]): Promise<RuntimeOutputRow[]> {
      if (!entries.length) return [];
      for (let attempt = 1; ; attempt++) {
        try {
          return await database.transaction(async ({ db: tx }) => {
            const keys = entries.map((e) => e.sourceKey).filter((k): k is string => k != null);
            const stored = new Set<string>();
            for (let i = 0; i < keys.length; i += 500) {
              const rows = await tx
                .select({ k: o.sourceKey })
                .from(o)
                .where(and(eq(o.sessionId, sessionId), inArray(o.sourceKey, keys.slice(i, i + 500))));
              for (const r of rows) if (r.k) stored.add(r.k);
            }
            const fresh = entries.filter((e, i) => {
              if (e.sourceKey == null) return true;
              if (stored.has(e.sourceKey)) return false;
              // The same key twice inside one batch is a re-send too.
              return entries.findIndex((x) => x.sourceKey === e.sourceKey) === i;
            });
            if (!fresh.length) return [];
            const [top] = await tx
              .select({ n: max(o.eventIndex) })
              .from(o)
              .where(eq(o.sessionId, sessionId));
            const first = (top?.n ?? -1) + 1;
            const rows = await tx
              .insert(o)
              .values(
                fresh.map((e, i) => ({
                  sessionId,
                  eventIndex: first + i,
                  ...e,
                  expiresAt: e.expiresAt ?? null,
                })),
              )
              .returning();
            return rows.sort((x, y) => x.eventIndex - y.eventIndex);
          });
        } catch (err) {
          if (!isUniqueViolation(err) || attempt >= MAX_ATTEMPTS) throw err;
        }
      }
    },
    /** Events with event_index >= fromIndex, in order. */
    async listFrom(sessionId: string, fromIndex: number, limit: number): Promise<RuntimeOutputRow[]> {
      return db
        .select()
        .from(o)
        .where(and(eq(o.sessionId, sessionId), gte(o.eventIndex, fromIndex)))
        .orderBy(asc(o.eventIndex))
        .limit(limit);
    },
  };
}
