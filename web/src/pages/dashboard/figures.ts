// Data shaping of the dashboard, pure (no DOM; test/unit/web-dashboard-figures.test.ts): the date
// range of a "last N days" choice, the uPlot series of the daily figures, and the quota bars of
// GET /api/quota/status (only dimensions that have a limit get a bar; a null limit means no limit).

export interface DayFigures {
  date: string;
  tokens: number;
  requests: number;
}

export interface PeriodQuota {
  tokens_used: number;
  requests_used: number;
  token_limit: number | null;
  request_limit: number | null;
}

export interface QuotaStatus {
  date: string;
  period: 'daily' | 'monthly';
  within_quota: boolean;
  exceeded: string[];
  user: PeriodQuota;
  tenant: PeriodQuota | null;
}

export interface QuotaBar {
  key: string;
  label: string;
  used: number;
  limit: number;
}

const DAY_MS = 86_400_000;

/** "YYYY-MM-DD" of a Date in UTC (the API counts days in UTC). */
export const utcDay = (d: Date) => d.toISOString().slice(0, 10);

/** The last `days` days ending with `today` (UTC), inclusive: {start, end} as the API takes them. */
export function lastDays(days: number, today: Date): { start: string; end: string } {
  const n = Math.max(1, Math.floor(days));
  return { start: utcDay(new Date(today.getTime() - (n - 1) * DAY_MS)), end: utcDay(today) };
}

/** uPlot's columnar data: x in seconds (midnight UTC of each day), then tokens, then requests. */
export function chartSeries(daily: readonly DayFigures[]): [number[], number[], number[]] {
  const xs: number[] = [];
  const tokens: number[] = [];
  const requests: number[] = [];
  for (const d of daily) {
    const t = Date.parse(`${d.date}T00:00:00Z`);
    if (Number.isNaN(t)) continue;
    xs.push(t / 1000);
    tokens.push(d.tokens);
    requests.push(d.requests);
  }
  return [xs, tokens, requests];
}

/** One bar per limited dimension of the caller (and of the tenant when it has limits). */
export function quotaBars(s: Pick<QuotaStatus, 'period' | 'user' | 'tenant'>): QuotaBar[] {
  const when = s.period === 'daily' ? 'today' : 'this month';
  const bars: QuotaBar[] = [];
  const add = (who: 'user' | 'tenant', q: PeriodQuota | null) => {
    if (!q) return;
    const owner = who === 'user' ? 'Your' : 'Your tenant’s';
    if (q.token_limit !== null)
      bars.push({
        key: `${who}-tokens`,
        label: `${owner} tokens ${when}`,
        used: q.tokens_used,
        limit: q.token_limit,
      });
    if (q.request_limit !== null)
      bars.push({
        key: `${who}-requests`,
        label: `${owner} requests ${when}`,
        used: q.requests_used,
        limit: q.request_limit,
      });
  };
  add('user', s.user);
  add('tenant', s.tenant);
  return bars;
}
