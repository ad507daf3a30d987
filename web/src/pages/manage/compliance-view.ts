// Pure shaping for the compliance page (unit-tested in test/unit/web-manage-forms.test.ts): a report
// summary as label/value lines, and the default report period (the last 30 days, UTC dates).
import { formatNumber } from '../../ui/format.ts';

/** "rows_past_retention" -> "Rows past retention". */
export const labelOf = (key: string) => {
  const s = key.replace(/_/g, ' ').trim();
  return s ? s[0]!.toUpperCase() + s.slice(1) : s;
};

/** Summary fields as readable lines: numbers with separators, booleans yes/no, objects as compact JSON. */
export function summaryEntries(summary: Record<string, unknown> | null | undefined): [string, string][] {
  if (!summary) return [];
  return Object.entries(summary).map(([k, v]) => {
    let text: string;
    if (typeof v === 'number') text = formatNumber(v);
    else if (typeof v === 'boolean') text = v ? 'yes' : 'no';
    else if (v == null) text = '—';
    else if (typeof v === 'string') text = v;
    else text = JSON.stringify(v);
    return [labelOf(k), text];
  });
}

const day = (d: Date) => d.toISOString().slice(0, 10);

/** The last `days` days up to and including `now`'s UTC date. */
export function defaultPeriod(now: Date, days = 30): { start: string; end: string } {
  return { start: day(new Date(now.getTime() - (days - 1) * 86_400_000)), end: day(now) };
}
