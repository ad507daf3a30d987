// Pure arithmetic over the grouped rows the analytics repository returns: totals, group-bys, a daily
// series with every day of the window present (days without usage are 0), per-user totals, and the
// rounding every ratio in a response gets. Tokens and counts stay integers; only ratios are decimals.
import { daysOf } from './days.ts';

export interface Amounts {
  tokens: number;
  inputTokens: number;
  outputTokens: number;
  requests: number;
}

export const round2 = (v: number): number => Math.round(v * 100) / 100;
/** a / b rounded to 2 decimals, 0 when b is 0. */
export const ratio = (a: number, b: number): number => (b === 0 ? 0 : round2(a / b));
/** Percentage change from `before` to `after` (null when before is 0). */
export const changePercent = (before: number, after: number): number | null =>
  before === 0 ? null : round2(((after - before) / before) * 100);

export const zero = (): Amounts => ({ tokens: 0, inputTokens: 0, outputTokens: 0, requests: 0 });

export function addInto(acc: Amounts, r: Amounts): Amounts {
  acc.tokens += r.tokens;
  acc.inputTokens += r.inputTokens;
  acc.outputTokens += r.outputTokens;
  acc.requests += r.requests;
  return acc;
}

export const totalOf = (rows: readonly Amounts[]): Amounts => rows.reduce(addInto, zero());

/** Sums rows by key; entries sorted by tokens descending, then key. */
export function sumBy<R extends Amounts>(rows: readonly R[], key: (r: R) => string): [string, Amounts][] {
  const m = new Map<string, Amounts>();
  for (const r of rows) addInto(m.get(key(r)) ?? m.set(key(r), zero()).get(key(r))!, r);
  return [...m.entries()].sort((a, b) => b[1].tokens - a[1].tokens || a[0].localeCompare(b[0]));
}

/** One entry per day of the window, zero-filled. */
export function dailySeries<R extends Amounts & { date: string }>(
  rows: readonly R[],
  start: string,
  end: string,
): ({ date: string } & Amounts)[] {
  const m = new Map(sumBy(rows, (r) => r.date));
  return daysOf(start, end).map((date) => ({ date, ...(m.get(date) ?? zero()) }));
}

/** The JSON shape of an amount set. */
export const amountsView = (a: Amounts) => ({
  tokens: a.tokens,
  input_tokens: a.inputTokens,
  output_tokens: a.outputTokens,
  requests: a.requests,
});

export interface UserTotal extends Amounts {
  userId: number;
  username: string;
  tenantId: number | null;
  activeDays: number;
}

/** Per-user totals over per-user-day rows, sorted by tokens descending, then username. */
export function userTotals<R extends Amounts & { userId: number; username: string; tenantId: number | null }>(
  rows: readonly R[],
): UserTotal[] {
  const m = new Map<number, UserTotal>();
  for (const r of rows) {
    let u = m.get(r.userId);
    if (!u) {
      u = { userId: r.userId, username: r.username, tenantId: r.tenantId, activeDays: 0, ...zero() };
      m.set(r.userId, u);
    }
    addInto(u, r);
    if (r.tokens > 0 || r.requests > 0) u.activeDays++;
  }
  return [...m.values()].sort((a, b) => b.tokens - a.tokens || a.username.localeCompare(b.username));
}

/** Weekday name of a day (UTC). */
export const weekdayOf = (day: string): string =>
  ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'][
    new Date(`${day}T00:00:00Z`).getUTCDay()
  ]!;

/** Least-squares slope of a series against its index (per step); 0 with fewer than 2 values. */
export function linearSlope(values: readonly number[]): number {
  const k = values.length;
  if (k < 2) return 0;
  const mx = (k - 1) / 2;
  const my = values.reduce((s, v) => s + v, 0) / k;
  let num = 0;
  let den = 0;
  values.forEach((v, i) => {
    num += (i - mx) * (v - my);
    den += (i - mx) * (i - mx);
  });
  return num / den;
}
