/**
 * Quota alert and enforcement rules, pure (spec document 2: quota_alerts, alerts, rule 6; issue 10
 * items 6 and 7).
 *
 * - A limit is watched at 80 %, 90 % and 100 % of its use (used counters only; requests in flight do
 *   not raise alerts). Each threshold is raised at most once per subject, quota and period: its
 *   `dedupe_key` (`user:<id>:daily_tokens:90:2026-11-23`) is UNIQUE in quota_alerts, and a second
 *   raise of the same key is a no-op.
 * - A tick raises only the HIGHEST threshold a limit has reached: usage that jumps from 50 % to 100 %
 *   gives one critical alert, not three. Usage never falls within a period, so a lower threshold that
 *   was skipped is never due later.
 * - Severity: `warning` at 80 and 90 %, `critical` at 100 %.
 * - A subject is over quota when a limit is reached (used >= limit); null limits are unlimited.
 */
import type { PeriodUsage, QuotaLimits, QuotaMeasure, QuotaPeriod, QuotaScope } from './quota.ts';

export const ALERT_THRESHOLDS = [80, 90, 100] as const;
export type AlertThreshold = (typeof ALERT_THRESHOLDS)[number];
export type AlertSeverity = 'warning' | 'critical';

/** `daily_tokens`, `monthly_requests`, ... (quota_alerts.quota_type). */
export type QuotaType = `${QuotaPeriod}_${QuotaMeasure}`;

export interface QuotaAlertCandidate {
  scope: QuotaScope;
  /** The user id (user scope) or tenant id (tenant scope). */
  subjectId: number;
  period: QuotaPeriod;
  measure: QuotaMeasure;
  quotaType: QuotaType;
  threshold: AlertThreshold;
  severity: AlertSeverity;
  current: number;
  limit: number;
  /** Of the limit, rounded to two decimals. */
  percentage: number;
  /** First day of the period: YYYY-MM-DD, or YYYY-MM-01 for a month. */
  periodKey: string;
  dedupeKey: string;
}

/** The highest threshold `used` has reached, or null (also for an unlimited or zero limit's absence). */
export function highestThreshold(used: number, limit: number | null): AlertThreshold | null {
  if (limit === null) return null;
  if (limit <= 0) return 100;
  let reached: AlertThreshold | null = null;
  // used * 100 >= t * limit: integer arithmetic, no rounding at the boundary.
  for (const t of ALERT_THRESHOLDS) if (used * 100 >= t * limit) reached = t;
  return reached;
}

export const severityOf = (t: AlertThreshold): AlertSeverity => (t === 100 ? 'critical' : 'warning');

export function quotaAlertDedupeKey(
  scope: QuotaScope,
  subjectId: number,
  quotaType: QuotaType,
  threshold: AlertThreshold,
  periodKey: string,
): string {
  return `${scope}:${subjectId}:${quotaType}:${threshold}:${periodKey}`;
}

export interface SubjectUsage {
  scope: QuotaScope;
  subjectId: number;
  limits: QuotaLimits;
  daily: PeriodUsage;
  monthly: PeriodUsage;
  /** YYYY-MM-DD of the day and YYYY-MM-01 of the month the counters belong to. */
  day: string;
  month: string;
}

const DIMENSIONS: Array<{ period: QuotaPeriod; measure: QuotaMeasure }> = [
  { period: 'daily', measure: 'tokens' },
  { period: 'daily', measure: 'requests' },
  { period: 'monthly', measure: 'tokens' },
  { period: 'monthly', measure: 'requests' },
];

function limitOf(limits: QuotaLimits, period: QuotaPeriod, measure: QuotaMeasure): number | null {
  if (period === 'daily') return measure === 'tokens' ? limits.dailyTokens : limits.dailyRequests;
  return measure === 'tokens' ? limits.monthlyTokens : limits.monthlyRequests;
}

const usedOf = (u: PeriodUsage, measure: QuotaMeasure) =>
  measure === 'tokens' ? u.tokensUsed : u.requestsUsed;

/** The alerts a subject's counters call for now (one per limit at most: its highest threshold). */
export function quotaAlertCandidates(s: SubjectUsage): QuotaAlertCandidate[] {
  const out: QuotaAlertCandidate[] = [];
  for (const { period, measure } of DIMENSIONS) {
    const limit = limitOf(s.limits, period, measure);
    const current = usedOf(period === 'daily' ? s.daily : s.monthly, measure);
    const threshold = highestThreshold(current, limit);
    if (threshold === null || limit === null) continue;
    const quotaType: QuotaType = `${period}_${measure}`;
    const periodKey = period === 'daily' ? s.day : s.month;
    out.push({
      scope: s.scope,
      subjectId: s.subjectId,
      period,
      measure,
      quotaType,
      threshold,
      severity: severityOf(threshold),
      current,
      limit,
      percentage: limit > 0 ? Math.round((current * 10_000) / limit) / 100 : 100,
      periodKey,
      dedupeKey: quotaAlertDedupeKey(s.scope, s.subjectId, quotaType, threshold, periodKey),
    });
  }
  return out;
}

/** Whether any limit is reached (used >= limit): the subject is over quota and is enforced. */
export function isOverQuota(s: Pick<SubjectUsage, 'limits' | 'daily' | 'monthly'>): boolean {
  return DIMENSIONS.some(({ period, measure }) => {
    const limit = limitOf(s.limits, period, measure);
    return limit !== null && usedOf(period === 'daily' ? s.daily : s.monthly, measure) >= limit;
  });
}

/** The alert's title and sentence (alerts.title / alerts.message). */
export function quotaAlertText(
  c: Pick<QuotaAlertCandidate, 'scope' | 'period' | 'measure' | 'threshold' | 'current' | 'limit'>,
  subjectName: string,
): { title: string; message: string } {
  const what = `${c.period} ${c.measure === 'tokens' ? 'token' : 'request'} quota`;
  const who = c.scope === 'user' ? `User ${subjectName}` : `Tenant ${subjectName}`;
  const title =
    c.threshold === 100 ? `${who} exhausted the ${what}` : `${who} reached ${c.threshold}% of the ${what}`;
  return { title, message: `${title}: ${c.current} of ${c.limit} used.` };
}
