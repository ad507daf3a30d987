// Pure helpers that turn form text into the API's values and back (no DOM: unit-tested in
// test/unit/web-manage-forms.test.ts). Quota and limit fields are integers; an empty field means
// "leave unchanged" (undefined) or, where the API allows it, "no limit" (null).

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/** '' -> undefined; a whole number 0..max -> the number; anything else an error in words. */
export function parseOptionalInt(
  text: string,
  opts: { min?: number; max?: number } = {},
): Parsed<number | undefined> {
  const s = text.trim().replace(/[,_ ]/g, '');
  if (s === '') return { ok: true, value: undefined };
  if (!/^\d{1,16}$/.test(s)) return { ok: false, error: 'must be a whole number' };
  const n = Number(s);
  const min = opts.min ?? 0;
  const max = opts.max ?? Number.MAX_SAFE_INTEGER;
  if (n < min) return { ok: false, error: `must be at least ${min}` };
  if (n > max) return { ok: false, error: `must be at most ${max}` };
  return { ok: true, value: n };
}

/**
 * Reads a set of integer fields at once. Returns the values to send (empty fields left out, or sent
 * as null when `emptyAs` is 'null') and the first problem per field.
 */
export function readIntFields<K extends string>(
  fields: Record<K, string>,
  opts: { emptyAs?: 'omit' | 'null'; min?: number; max?: number } = {},
): { values: Partial<Record<K, number | null>>; errors: Partial<Record<K, string>> } {
  const values: Partial<Record<K, number | null>> = {};
  const errors: Partial<Record<K, string>> = {};
  for (const key of Object.keys(fields) as K[]) {
    const p = parseOptionalInt(fields[key], opts);
    if (!p.ok) errors[key] = p.error;
    else if (p.value !== undefined) values[key] = p.value;
    else if (opts.emptyAs === 'null') values[key] = null;
  }
  return { values, errors };
}

/** A number (or null) as the text of an input: null/undefined -> ''. */
export const intText = (n: number | null | undefined) => (n == null ? '' : String(n));

/** A tenant select's value ('' = none) as the API's tenant_id. */
export function tenantIdOf(value: string): number | null {
  if (!/^[1-9]\d{0,9}$/.test(value)) return null;
  return Number(value);
}

/** The OAuth scopes field: words separated by spaces or commas. */
export const scopesOf = (text: string) =>
  text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);

/** Only the keys whose value differs from the current settings (what a PUT should carry). */
export function changedOnly<T extends object>(current: T, next: T): Partial<T> {
  const out: Partial<T> = {};
  for (const k of Object.keys(next) as (keyof T)[]) if (next[k] !== current[k]) out[k] = next[k];
  return out;
}
