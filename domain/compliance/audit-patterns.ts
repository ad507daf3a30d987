// Audit analysis, pure (issue 11 item 4): patterns (actions by hour of day and by day, top actors,
// failure rates per action), anomalies (robust z-scores of per-user daily audit counts,
// domain/analytics/robust-stats.ts) and one user's activity profile, all from audit rows.
import { ROBUST_Z_THRESHOLD, robustZScores } from '../analytics/robust-stats.ts';

export interface AuditEvent {
  timestamp: Date;
  userId: number | null;
  username: string | null;
  action: string;
  success: boolean;
  severity?: string;
}

const dayOf = (d: Date) => d.toISOString().slice(0, 10);
const sortedCounts = (m: Map<string, number>) =>
  [...m.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([key, count]) => ({ key, count }));
const bump = <K>(m: Map<K, number>, k: K) => m.set(k, (m.get(k) ?? 0) + 1);
const rate = (failed: number, total: number) =>
  total > 0 ? Math.round((failed / total) * 10_000) / 10_000 : 0;

export function auditPatterns(events: readonly AuditEvent[], topN = 10) {
  const byHour = new Array<number>(24).fill(0);
  const byDay = new Map<string, number>();
  const actors = new Map<string, { user_id: number | null; username: string | null; count: number }>();
  const actions = new Map<string, { total: number; failed: number }>();
  let failed = 0;
  for (const e of events) {
    byHour[e.timestamp.getUTCHours()]!++;
    bump(byDay, dayOf(e.timestamp));
    const key = `${e.userId ?? ''}|${e.username ?? ''}`;
    const a = actors.get(key) ?? { user_id: e.userId, username: e.username, count: 0 };
    a.count++;
    actors.set(key, a);
    const act = actions.get(e.action) ?? { total: 0, failed: 0 };
    act.total++;
    if (!e.success) {
      act.failed++;
      failed++;
    }
    actions.set(e.action, act);
  }
  return {
    total_events: events.length,
    failed_events: failed,
    failure_rate: rate(failed, events.length),
    by_hour: byHour.map((count, hour) => ({ hour, count })),
    by_day: sortedCounts(byDay).map(({ key, count }) => ({ date: key, count })),
    top_actors: [...actors.values()]
      .sort((a, b) => b.count - a.count || (a.user_id ?? 0) - (b.user_id ?? 0))
      .slice(0, topN),
    by_action: [...actions.entries()]
      .map(([action, v]) => ({
        action,
        total: v.total,
        failed: v.failed,
        failure_rate: rate(v.failed, v.total),
      }))
      .sort((a, b) => b.total - a.total || a.action.localeCompare(b.action)),
  };
}

/** Fewer user-days than this: no anomaly is reported (the median and MAD mean little). */
export const MIN_ANOMALY_SAMPLES = 5;

/**
 * Per-user daily audit counts; a (user, day) whose modified z-score exceeds `threshold` is an anomaly
 * (only unusually high activity is flagged). Events without a user are left out.
 */
export function auditAnomalies(events: readonly AuditEvent[], threshold = ROBUST_Z_THRESHOLD) {
  const cells = new Map<string, { user_id: number; username: string | null; date: string; count: number }>();
  for (const e of events) {
    if (e.userId == null) continue;
    const date = dayOf(e.timestamp);
    const key = `${e.userId}|${date}`;
    const c = cells.get(key) ?? { user_id: e.userId, username: e.username, date, count: 0 };
    c.count++;
    cells.set(key, c);
  }
  const list = [...cells.values()];
  if (list.length < MIN_ANOMALY_SAMPLES)
    return {
      method: 'robust_z_score',
      threshold,
      samples: list.length,
      median: null,
      mad: null,
      anomalies: [],
    };
  const stats = robustZScores(list.map((c) => c.count));
  const anomalies = list
    .map((c, i) => ({ ...c, z_score: Math.round(stats.scores[i]! * 100) / 100 }))
    .filter((c) => c.z_score > threshold)
    .sort((a, b) => b.z_score - a.z_score || a.date.localeCompare(b.date));
  return {
    method: 'robust_z_score',
    threshold,
    samples: list.length,
    median: stats.median,
    mad: stats.mad,
    scale: stats.scale,
    anomalies,
  };
}

export function activityProfile(events: readonly AuditEvent[]) {
  const p = auditPatterns(events, 1);
  const activeHours = p.by_hour.filter((h) => h.count > 0);
  const peak = activeHours.sort((a, b) => b.count - a.count || a.hour - b.hour)[0];
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const e of events) {
    first = Math.min(first, e.timestamp.getTime());
    last = Math.max(last, e.timestamp.getTime());
  }
  return {
    total_events: p.total_events,
    failed_events: p.failed_events,
    failure_rate: p.failure_rate,
    active_days: p.by_day.length,
    peak_hour: peak?.hour ?? null,
    by_hour: p.by_hour,
    by_day: p.by_day,
    by_action: p.by_action,
    first_event: events.length ? new Date(first).toISOString() : null,
    last_event: events.length ? new Date(last).toISOString() : null,
  };
}
