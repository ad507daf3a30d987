// A WHERE clause built piece by piece for the usage read repositories (read-usage.ts,
// read-messages.ts, read-requests.ts), starting from the caller's tenant scope through the one scope
// helper (db/tenant-scope-sql.ts). Values always go in as `?` parameters.
import type { ReadScope } from '../../../domain/tenant-scope.ts';
import { rawScopeCondition } from '../../tenant-scope-sql.ts';

export class Where {
  private readonly parts: string[] = [];
  readonly params: unknown[] = [];

  /** Adds a condition with its parameters. */
  and(condition: string, ...params: unknown[]): this {
    this.parts.push(condition);
    this.params.push(...params);
    return this;
  }

  /** Adds `column = ?` when the value is given. */
  eq(column: string, value: unknown): this {
    return value === undefined || value === null ? this : this.and(`${column} = ?`, value);
  }

  get sql(): string {
    return this.parts.length ? `WHERE ${this.parts.join(' AND ')}` : '';
  }
}

/** A clause holding the scope's tenant condition on `column`; null when the scope sees nothing. */
export function scopedWhere(scope: ReadScope, column: string): Where | null {
  const cond = rawScopeCondition(scope, column);
  if (cond === false) return null;
  const w = new Where();
  if (cond) w.and(cond.sql, ...cond.params);
  return w;
}

/** Integer from a driver value (PostgreSQL returns COUNT and SUM as strings or numbers). */
export const num = (v: unknown): number => (v == null ? 0 : Number(v));

/** ISO 8601 from a stored timestamp (SQLite: epoch milliseconds; PostgreSQL: Date). */
export function isoOf(v: unknown): string | null {
  if (v == null) return null;
  const d =
    v instanceof Date ? v : new Date(typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : (v as number));
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}
