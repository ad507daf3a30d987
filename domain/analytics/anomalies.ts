// Token anomalies per user and day, pure. Method: for each user, the modified z-score (median / MAD,
// robust-stats.ts) of the tokens of each day the user was active in the window; a day with |z| above
// the threshold (3.5) is an anomaly: `token_spike` above the user's own median, `token_drop` below.
// Only active days count (a day without usage is absence, not a drop), and a user needs at least
// MIN_ACTIVE_DAYS of them before any day is judged. Severity: |z| >= 10 critical, >= 6 high, else
// medium.
//
// Recording (anomaly_status): one anomaly record is one type on one day in one tenant; its
// anomaly_type is `<type>:<YYYY-MM-DD>` and affected_users_hash the SHA-256 (hex) of the affected user
// ids, sorted numerically and joined with ','. The same anomaly therefore always has the same key,
// whoever looks at it.
import { createHash } from 'node:crypto';
import { ROBUST_Z_THRESHOLD, robustZScores } from './robust-stats.ts';

export const MIN_ACTIVE_DAYS = 5;
export const ANOMALY_TYPES = ['token_spike', 'token_drop'] as const;
export type AnomalyType = (typeof ANOMALY_TYPES)[number];
export const SEVERITIES = ['medium', 'high', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

export const ANOMALY_METHOD = {
  name: 'robust_z_score',
  description:
    "modified z-score 0.6745 * (x - median) / MAD over each user's active days in the window (Iglewicz & Hoaglin)",
  threshold: ROBUST_Z_THRESHOLD,
  min_active_days: MIN_ACTIVE_DAYS,
  severity: { medium: '|z| > 3.5', high: '|z| >= 6', critical: '|z| >= 10' },
} as const;

export interface UserDay {
  userId: number;
  username: string;
  tenantId: number | null;
  date: string;
  tokens: number;
  requests: number;
}

export interface Anomaly {
  type: AnomalyType;
  severity: Severity;
  userId: number;
  username: string;
  tenantId: number | null;
  date: string;
  tokens: number;
  baselineMedian: number;
  mad: number;
  zScore: number;
}

export const severityOf = (z: number): Severity => {
  const a = Math.abs(z);
  return a >= 10 ? 'critical' : a >= 6 ? 'high' : 'medium';
};

/** Every anomalous user-day, ordered by date, then |z| descending. */
export function detectAnomalies(rows: readonly UserDay[], threshold = ROBUST_Z_THRESHOLD): Anomaly[] {
  const byUser = new Map<number, UserDay[]>();
  for (const r of rows) {
    if (r.tokens <= 0) continue;
    const list = byUser.get(r.userId) ?? [];
    list.push(r);
    byUser.set(r.userId, list);
  }
  const out: Anomaly[] = [];
  for (const days of byUser.values()) {
    if (days.length < MIN_ACTIVE_DAYS) continue;
    const s = robustZScores(days.map((d) => d.tokens));
    days.forEach((d, i) => {
      const z = s.scores[i]!;
      if (Math.abs(z) <= threshold) return;
      out.push({
        type: z > 0 ? 'token_spike' : 'token_drop',
        severity: severityOf(z),
        userId: d.userId,
        username: d.username,
        tenantId: d.tenantId,
        date: d.date,
        tokens: d.tokens,
        baselineMedian: s.median,
        mad: s.mad,
        zScore: Math.round(z * 100) / 100,
      });
    });
  }
  return out.sort((a, b) => a.date.localeCompare(b.date) || Math.abs(b.zScore) - Math.abs(a.zScore));
}

/** SHA-256 (hex) of the user ids sorted numerically and joined with ','. */
export const affectedUsersHash = (userIds: readonly number[]): string =>
  createHash('sha256')
    .update([...new Set(userIds)].sort((a, b) => a - b).join(','))
    .digest('hex');

export interface AnomalyGroup {
  /** `<type>:<date>`, the anomaly_status.anomaly_type. */
  key: string;
  type: AnomalyType;
  date: string;
  tenantId: number | null;
  userIds: number[];
  hash: string;
  members: Anomaly[];
}

/** Anomalies grouped into recordable units: one type, one day, one tenant. */
export function groupAnomalies(anomalies: readonly Anomaly[]): AnomalyGroup[] {
  const groups = new Map<string, AnomalyGroup>();
  for (const a of anomalies) {
    const id = `${a.type}|${a.date}|${a.tenantId ?? ''}`;
    let g = groups.get(id);
    if (!g) {
      g = {
        key: `${a.type}:${a.date}`,
        type: a.type,
        date: a.date,
        tenantId: a.tenantId,
        userIds: [],
        hash: '',
        members: [],
      };
      groups.set(id, g);
    }
    g.members.push(a);
    g.userIds.push(a.userId);
  }
  for (const g of groups.values()) {
    g.userIds = [...new Set(g.userIds)].sort((a, b) => a - b);
    g.hash = affectedUsersHash(g.userIds);
  }
  return [...groups.values()];
}
