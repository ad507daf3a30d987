// One-time machine registration tokens. Only the SHA-256 of a token is stored; consuming is one atomic
// UPDATE, so two registrations racing with the same token cannot both win.
import { and, eq, gt, isNull, or } from 'drizzle-orm';
import type { DatabaseHandle } from '../client.ts';

export function registrationTokensRepository({ db, t }: DatabaseHandle) {
  const tokens = t.registrationTokens;
  return {
    async create(values: {
      tokenHash: string;
      tenantId: number;
      createdBy: number | null;
      createdAt: Date;
      expiresAt: Date | null;
    }) {
      const [row] = await db.insert(tokens).values(values).returning({ id: tokens.id });
      return row!;
    },
    /** Marks the token consumed; returns its row, or undefined when unknown, consumed or expired. */
    async consume(tokenHash: string, machineId: string, now: Date) {
      const [row] = await db
        .update(tokens)
        .set({ consumedAt: now, consumedByMachineId: machineId.slice(0, 64) })
        .where(
          and(
            eq(tokens.tokenHash, tokenHash),
            isNull(tokens.consumedAt),
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
  };
}
