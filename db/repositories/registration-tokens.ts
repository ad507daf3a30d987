// One-time machine registration tokens. Only the SHA-256 of a token is stored; consuming is one atomic
// UPDATE, so two registrations racing with the same token cannot both win. A token is usable while it
// is neither consumed, revoked nor expired; all three are refused alike.
import { and, desc, eq, gt, isNull, or } from 'drizzle-orm';
import type { DatabaseHandle } from '../client.ts';

export type RegistrationTokenRow = DatabaseHandle['t']['registrationTokens']['$inferSelect'];

export function registrationTokensRepository({ db, t }: DatabaseHandle) {
  const tokens = t.registrationTokens;
  return {
    async create(values: {
      tokenHash: string;
      tenantId: number;
      createdBy: number | null;
      createdAt: Date;
      expiresAt: Date | null;
      /** Re-enrolment: the existing machine this token may take over. */
      machineId?: string | null;
    }) {
      const [row] = await db.insert(tokens).values(values).returning({ id: tokens.id });
      return row!;
    },
    /** Marks the token consumed; returns its row, or undefined when unknown, consumed, revoked or expired. */
    async consume(tokenHash: string, machineId: string, now: Date) {
      const [row] = await db
        .update(tokens)
        .set({ consumedAt: now, consumedByMachineId: machineId.slice(0, 64) })
        .where(
          and(
            eq(tokens.tokenHash, tokenHash),
            isNull(tokens.consumedAt),
            isNull(tokens.revokedAt),
            or(isNull(tokens.expiresAt), gt(tokens.expiresAt, now)),
          ),
        )
        .returning();
      return row;
    },
    async find(tokenHash: string) {
      const [row] = await db.select().from(tokens).where(eq(tokens.tokenHash, tokenHash));
      return row;
    },
    async findById(id: number): Promise<RegistrationTokenRow | undefined> {
      const [row] = await db.select().from(tokens).where(eq(tokens.id, id));
      return row;
    },
    /** Newest first. */
    async list(limit: number): Promise<RegistrationTokenRow[]> {
      return db.select().from(tokens).orderBy(desc(tokens.id)).limit(limit);
    },
    /** Revokes an unused, unrevoked token; false when it is gone, consumed or already revoked. */
    async revoke(id: number, by: number | null, now: Date): Promise<boolean> {
      const rows = await db
        .update(tokens)
        .set({ revokedAt: now, revokedBy: by })
        .where(and(eq(tokens.id, id), isNull(tokens.consumedAt), isNull(tokens.revokedAt)))
        .returning({ id: tokens.id });
      return rows.length > 0;
    },
  };
}
