// Recognises a unique-constraint violation from either driver (drizzle may wrap it in `cause`).
export function isUniqueViolation(err: unknown): boolean {
  for (let e: any = err, i = 0; e && i < 4; e = e.cause, i++) {
    if (
      e.code === '23505' ||
      e.code === 'SQLITE_CONSTRAINT_UNIQUE' ||
      e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
    )
      return true;
  }
  return false;
}
