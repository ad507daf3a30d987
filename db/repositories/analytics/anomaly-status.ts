// The only SQL for `anomaly_status` (spec document 2, "Governance, alerts, quotas"): records that an
// anomaly was processed, once per (anomaly_type, affected_users_hash). The table has no unique key, so
// the insert is "insert unless present" inside a transaction; on PostgreSQL a transaction-scoped
// advisory lock on the key serialises concurrent recorders (SQLite transactions are already serial).
import type { DatabaseHandle, RawSql } from '../../client.ts';

export interface AnomalyRecord {
  id: number;
  anomalyType: string;
  affectedUsersHash: string;
  status: string;
  processedBy: number | null;
  processedAt: string | null;
}

const toIso = (v: unknown): string | null =>
  v == null
    ? null
    : new Date(typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : (v as string | number)).toISOString();

async function find(sql: RawSql, type: string, hash: string): Promise<AnomalyRecord | undefined> {
  const [r] = await sql.query<Record<string, unknown>>(
    `SELECT id, anomaly_type, affected_users_hash, status, processed_by, processed_at FROM anomaly_status
     WHERE anomaly_type = ? AND affected_users_hash = ? ORDER BY id LIMIT 1`,
    [type, hash],
  );
  if (!r) return undefined;
  return {
    id: Number(r.id),
    anomalyType: String(r.anomaly_type),
    affectedUsersHash: String(r.affected_users_hash),
    status: String(r.status),
    processedBy: r.processed_by == null ? null : Number(r.processed_by),
    processedAt: toIso(r.processed_at),
  };
}

export function anomalyStatusRepository(database: DatabaseHandle) {
  return {
    /** The stored record of the anomaly, inserting it first when absent; `created` tells which. */
    async record(
      entry: { anomalyType: string; affectedUsersHash: string; status: string; processedBy: number | null },
      at: Date,
    ): Promise<{ record: AnomalyRecord; created: boolean }> {
      return database.transaction(async ({ sql }) => {
        if (sql.dialect === 'postgres')
          await sql.query('SELECT pg_advisory_xact_lock(hashtext(?))', [
            `anomaly_status:${entry.anomalyType}:${entry.affectedUsersHash}`,
          ]);
        const existing = await find(sql, entry.anomalyType, entry.affectedUsersHash);
        if (existing) return { record: existing, created: false };
        await sql.query(
          `INSERT INTO anomaly_status (anomaly_type, affected_users_hash, status, processed_by, processed_at, created_at)
           VALUES (?, ?, ?, ?, ?, ?)`,
          [entry.anomalyType, entry.affectedUsersHash, entry.status, entry.processedBy, at, at],
        );
        return { record: (await find(sql, entry.anomalyType, entry.affectedUsersHash))!, created: true };
      });
    },

    async countFor(anomalyType: string, hash: string): Promise<number> {
      const [r] = await database.sql.query<{ n: number }>(
        'SELECT COUNT(*) AS n FROM anomaly_status WHERE anomaly_type = ? AND affected_users_hash = ?',
        [anomalyType, hash],
      );
      return Number(r?.n ?? 0);
    },
  };
}
