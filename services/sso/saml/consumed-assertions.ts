// Replay memory of the ACS: every accepted assertion id, per provider, kept until the assertion could
// no longer be accepted anyway (its latest NotOnOrAfter plus the skew). `recordAssertion` is
// insert-or-refuse on the unique (provider_name, assertion_id) key, so of two concurrent posts of one
// assertion exactly one is accepted; `assertionSeen` is the cheap pre-check that lets a replay be
// refused (and audited as one) before its RelayState is looked at. Expired rows are swept on insert.
import { and, eq, lt } from 'drizzle-orm';
import type { DatabaseHandle } from '../../../db/client.ts';

export interface ReplayDeps {
  database: DatabaseHandle;
  now: () => Date;
}

export async function assertionSeen(
  deps: ReplayDeps,
  providerName: string,
  assertionId: string,
): Promise<boolean> {
  const { db, t } = deps.database;
  const c = t.ssoConsumedAssertions;
  const rows = await db
    .select({ id: c.id })
    .from(c)
    .where(and(eq(c.providerName, providerName), eq(c.assertionId, assertionId)))
    .limit(1);
  return rows.length > 0;
}

/** True when recorded now; false when this assertion id was already consumed (a replay). */
export async function recordAssertion(
  deps: ReplayDeps,
  providerName: string,
  assertionId: string,
  expiresAt: Date,
): Promise<boolean> {
  const { db, t } = deps.database;
  const c = t.ssoConsumedAssertions;
  const now = deps.now();
  await db.delete(c).where(lt(c.expiresAt, now));
  const inserted = await db
    .insert(c)
    .values({ providerName, assertionId, expiresAt, createdAt: now })
    .onConflictDoNothing()
    .returning({ id: c.id });
  return inserted.length === 1;
}
