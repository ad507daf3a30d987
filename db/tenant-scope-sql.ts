// The one repository helper that turns a read scope (domain/tenant-scope.ts) into a WHERE condition
// (drizzle: scopeCondition; raw SQL: rawScopeCondition).
//   undefined -> no condition (system administrators see every tenant)
//   false     -> nothing is visible (skip the query, answer empty)
//   SQL       -> the row's tenant column(s) must name the caller's tenant (any of them, when several)
import { eq, or, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import type { ReadScope } from '../domain/tenant-scope.ts';

export function scopeCondition(scope: ReadScope, ...tenantColumns: PgColumn[]): SQL | undefined | false {
  if (scope.kind === 'all') return undefined;
  if (scope.kind === 'none' || tenantColumns.length === 0) return false;
  const parts = tenantColumns.map((c) => eq(c, scope.tenantId));
  return parts.length === 1 ? parts[0] : or(...parts);
}

/** The same decision for raw SQL (`?` placeholders): `column` is the row's tenant column as written. */
export function rawScopeCondition(
  scope: ReadScope,
  column: string,
): { sql: string; params: number[] } | undefined | false {
  if (scope.kind === 'all') return undefined;
  if (scope.kind === 'none') return false;
  return { sql: `${column} = ?`, params: [scope.tenantId] };
}
