// Calendar days for the analysis and analytics endpoints (spec document 2, rule 1: dates are
// `YYYY-MM-DD`). Pure: a day is a UTC calendar day; parsing is strict (a well-formed string naming a
// day that does not exist, such as 2026-02-30, is refused), and ranges are checked here once so every
// endpoint answers the same 400 naming the parameter.
import { z } from 'zod';
import { BadRequestError } from '../errors.ts';

const DAY_MS = 86_400_000;
/** The longest window an analysis reads (ten years of days). */
export const MAX_WINDOW_DAYS = 3660;

/** Whether `v` is a real calendar day written `YYYY-MM-DD`. */
export function isDay(v: string): boolean {
  if (v.length !== 10 || !/^\d{4}-\d{2}-\d{2}$/.test(v)) return false;
  const t = Date.parse(`${v}T00:00:00Z`);
  return !Number.isNaN(t) && new Date(t).toISOString().slice(0, 10) === v;
}

/** A zod string that must be a day; parseInput names the parameter in the 400. */
export const daySchema = z.string().refine(isDay, 'must be a date YYYY-MM-DD');

export const dayOf = (d: Date): string => d.toISOString().slice(0, 10);
export const addDays = (day: string, n: number): string =>
  dayOf(new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS));
/** Whole days from `a` to `b` (negative when b is before a). */
export const daysFrom = (a: string, b: string): number =>
  Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / DAY_MS);

/** Every day from `start` to `end`, both included. */
export function daysOf(start: string, end: string): string[] {
  const out: string[] = [];
  for (let d = start; d <= end; d = addDays(d, 1)) out.push(d);
  return out;
}

export interface DayWindow {
  start: string;
  end: string;
}

/** The `days` days ending on `end` (inclusive). */
export const windowEnding = (end: string, days: number): DayWindow => ({
  start: addDays(end, -(days - 1)),
  end,
});

/**
 * A window from optional parameters: missing ones default to `defaultDays` ending today. A start after
 * the end, or a window longer than MAX_WINDOW_DAYS, is a 400 naming the offending parameter.
 */
export function resolveWindow(
  given: { start?: string; end?: string },
  today: string,
  defaultDays: number,
  names: { start: string; end: string } = { start: 'start', end: 'end' },
): DayWindow {
  const end = given.end ?? today;
  const start = given.start ?? addDays(end, -(defaultDays - 1));
  if (start > end) throw new BadRequestError(`${names.end}: must not be before ${names.start}`);
  if (daysFrom(start, end) + 1 > MAX_WINDOW_DAYS)
    throw new BadRequestError(`${names.start}: the range may span at most ${MAX_WINDOW_DAYS} days`);
  return { start, end };
}
