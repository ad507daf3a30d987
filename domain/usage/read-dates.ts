// Dates of the usage read APIs, pure (spec document 2 rule 1 and the query defaults of the tables
// "Usage", "Messages", "Request statistics" and `/api/report/my-usage`). Days are UTC calendar days
// `YYYY-MM-DD`. A default like "30 days ago" is today minus 30 days, so the default trend lists 31
// days, today included. A range whose end is before its start, or a day list longer than
// MAX_RANGE_DAYS, is refused with a 400 naming the parameter at fault.
import { BadRequestError } from '../errors.ts';
import { isCalendarDate } from './ingest-rows.ts';

/** The longest day list a range may ask for (a year and its leap day). */
export const MAX_RANGE_DAYS = 366;
const DAY_MS = 86_400_000;

/** The UTC calendar day of an instant. */
export const dayOf = (at: Date): string => at.toISOString().slice(0, 10);

/** `day` moved by `n` days (negative: earlier). */
export const addDays = (day: string, n: number): string =>
  dayOf(new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS));

/** Days from `start` to `end`, both included (1 for a single day). */
export const daysInRange = (start: string, end: string): number =>
  Math.round((Date.parse(`${end}T00:00:00Z`) - Date.parse(`${start}T00:00:00Z`)) / DAY_MS) + 1;

/** Every day from `start` to `end`, both included. */
export function eachDay(start: string, end: string): string[] {
  const out: string[] = [];
  for (let d = start; d <= end; d = addDays(d, 1)) out.push(d);
  return out;
}

export interface DayRange {
  start: string;
  end: string;
}

/**
 * A range from optional query values: `start` defaults to today minus `defaultDaysBack`, `end` to
 * today. `names` are the parameters as the endpoint spells them (e.g. start/end or
 * start_date/end_date), so the 400 names the right one.
 */
export function resolveRange(
  given: { start?: string; end?: string },
  today: string,
  defaultDaysBack: number,
  names: { start: string; end: string } = { start: 'start', end: 'end' },
): DayRange {
  if (given.start !== undefined && !isCalendarDate(given.start))
    throw new BadRequestError(`${names.start}: must be a date YYYY-MM-DD`);
  if (given.end !== undefined && !isCalendarDate(given.end))
    throw new BadRequestError(`${names.end}: must be a date YYYY-MM-DD`);
  const end = given.end ?? today;
  const start = given.start ?? addDays(end < today ? end : today, -defaultDaysBack);
  if (end < start) throw new BadRequestError(`${names.end}: must not be before ${names.start}`);
  if (daysInRange(start, end) > MAX_RANGE_DAYS)
    throw new BadRequestError(
      `${given.start === undefined ? names.end : names.start}: the range may cover at most ${MAX_RANGE_DAYS} days`,
    );
  return { start, end };
}

/** The calendar month `year`-`month` (1-12) as a day range. */
export function monthRange(year: number, month: number): DayRange {
  const start = `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-01`;
  // Day 0 of the next month is the last day of this one.
  return { start, end: dayOf(new Date(Date.UTC(year, month, 0))) };
}

/** The last `days` days ending today (today included). */
export const lastDays = (today: string, days: number): DayRange => ({
  start: addDays(today, -(days - 1)),
  end: today,
});
