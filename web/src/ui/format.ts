// Pure formatting helpers every page uses: numbers with thousands separators (Intl), times in the
// viewer's time zone, durations and byte sizes. No DOM here: node imports this file in
// test/unit/web-format.test.ts.

/** An integer or decimal with the locale's grouping: 1234567.8 -> "1,234,567.8". */
export function formatNumber(n: number | null | undefined, opts: { locale?: string; digits?: number } = {}) {
  if (n == null || !Number.isFinite(n)) return '—';
  return new Intl.NumberFormat(opts.locale, { maximumFractionDigits: opts.digits ?? 2 }).format(n);
}

/** Money in a currency (default USD): 1234.5 -> "$1,234.50". */
export function formatMoney(n: number | null | undefined, opts: { locale?: string; currency?: string } = {}) {
  if (n == null || !Number.isFinite(n)) return '—';
  return new Intl.NumberFormat(opts.locale, { style: 'currency', currency: opts.currency ?? 'USD' }).format(
    n,
  );
}

/**
 * THE presentation of a token limit, user and tenant alike: whole tokens with the locale's grouping,
 * "5,000,000 tokens". User quotas are stored in millions (spec data model) and tenant limits in
 * tokens; pass `inMillions` for the former so both read the same on one screen. No limit: "no limit".
 */
export function formatTokenLimit(
  n: number | null | undefined,
  opts: { locale?: string; inMillions?: boolean } = {},
) {
  if (n == null || !Number.isFinite(n)) return 'no limit';
  const tokens = opts.inMillions ? n * 1_000_000 : n;
  return `${new Intl.NumberFormat(opts.locale, { maximumFractionDigits: 0 }).format(tokens)} tokens`;
}

/** A ratio 0..1 as a percentage: 0.256 -> "25.6%". */
export function formatPercent(
  ratio: number | null | undefined,
  opts: { locale?: string; digits?: number } = {},
) {
  if (ratio == null || !Number.isFinite(ratio)) return '—';
  return new Intl.NumberFormat(opts.locale, {
    style: 'percent',
    maximumFractionDigits: opts.digits ?? 1,
  }).format(ratio);
}

/**
 * A timestamp (ISO string, epoch ms or Date) as date and time in the viewer's zone (or `timeZone`).
 * Invalid or missing input gives "—".
 */
export function formatTime(
  t: string | number | Date | null | undefined,
  opts: { locale?: string; timeZone?: string; dateOnly?: boolean } = {},
) {
  if (t == null || t === '') return '—';
  const d = t instanceof Date ? t : new Date(t);
  if (Number.isNaN(d.getTime())) return '—';
  return new Intl.DateTimeFormat(opts.locale, {
    timeZone: opts.timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    ...(opts.dateOnly ? {} : { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }),
  }).format(d);
}

/** A duration in milliseconds, two largest units: 3723000 -> "1h 2m", 1500 -> "1.5s", 250 -> "250ms". */
export function formatDuration(ms: number | null | undefined) {
  if (ms == null || !Number.isFinite(ms)) return '—';
  const sign = ms < 0 ? '-' : '';
  const abs = Math.abs(ms);
  if (abs < 1000) return `${sign}${Math.round(abs)}ms`;
  if (abs < 60_000) return `${sign}${Number((abs / 1000).toFixed(1))}s`;
  const units: [string, number][] = [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ];
  const whole = Math.floor(abs / 1000) * 1000;
  const first = units.findIndex(([, size]) => whole >= size);
  const [bigName, bigSize] = units[first]!;
  const parts = [`${Math.floor(whole / bigSize)}${bigName}`];
  const small = units[first + 1];
  if (small) {
    const q = Math.floor((whole % bigSize) / small[1]);
    if (q > 0) parts.push(`${q}${small[0]}`);
  }
  return sign + parts.join(' ');
}

/** Bytes in binary units: 1536 -> "1.5 KiB". */
export function formatBytes(n: number | null | undefined, opts: { locale?: string } = {}) {
  if (n == null || !Number.isFinite(n)) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = Math.abs(n);
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${n < 0 ? '-' : ''}${formatNumber(v, { locale: opts.locale, digits: i === 0 ? 0 : 1 })} ${units[i]}`;
}

/** Abbreviations kept in capitals when a code is turned into words. */
const ACRONYMS = new Set(['api', 'cli', 'sso', 'ip', 'id', 'url', 'saml', 'oidc', 'llm', 'csv', 'json']);

/**
 * THE one mapping from the API's codes to words on screen: `tenant_daily_tokens` -> "Tenant daily
 * tokens", `sso_enabled` -> "SSO enabled". Codes stay in the API; people read words.
 */
export function codeWords(code: string | null | undefined): string {
  if (!code) return '';
  const words = code
    .split(/[_\-\s]+/)
    .filter(Boolean)
    .map((w) => (ACRONYMS.has(w.toLowerCase()) ? w.toUpperCase() : w.toLowerCase()));
  const text = words.join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Used against a limit as a whole percentage, uncapped (156 for 1.56 times the limit); 0 without a limit. */
export function usedPercent(used: number, limit: number): number {
  return limit > 0 ? Math.round((Math.max(0, used) / limit) * 100) : 0;
}

/**
 * A short figure for tight places such as chart axes: 1234567 -> "1.2M", 45000 -> "45K", 12 -> "12".
 * Full figures stay in the tables; an axis label must fit its margin whatever the data.
 */
export function formatCompact(n: number | null | undefined, opts: { locale?: string } = {}) {
  if (n == null || !Number.isFinite(n)) return '—';
  return new Intl.NumberFormat(opts.locale ?? 'en', { notation: 'compact', maximumFractionDigits: 1 }).format(
    n,
  );
}
