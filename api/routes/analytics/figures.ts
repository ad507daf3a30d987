// The figures shared by the analysis (/api/analysis/*) and analytics (/api/analytics/*) routers:
// request parameters (zod, 400 naming the parameter), the caller's read scope and today, and the
// compositions several endpoints answer with (tool comparison, user ranking, anomalies with their
// anomaly_status records, the 30-day summary, recommendations). The SQL is in
// db/repositories/analytics/, the arithmetic in domain/analytics/; this file only joins them.
import type { Request } from 'express';
import { z } from 'zod';
import {
  type AnomalyRecord,
  anomalyStatusRepository,
} from '../../../db/repositories/analytics/anomaly-status.ts';
import { analyticsReadRepository, type UsageCell } from '../../../db/repositories/analytics/usage-reads.ts';
import { type Anomaly, detectAnomalies, groupAnomalies } from '../../../domain/analytics/anomalies.ts';
import { type DayWindow, dayOf, windowEnding } from '../../../domain/analytics/days.ts';
import {
  amountsView,
  changePercent,
  dailySeries,
  ratio,
  sumBy,
  totalOf,
  type UserTotal,
  userTotals,
} from '../../../domain/analytics/figures.ts';
import { type Recommendation, recommend } from '../../../domain/analytics/insights.ts';
import { type ReadScope, readScope } from '../../../domain/tenant-scope.ts';
import { raiseAnomalyAlert } from '../../../services/alerts/producers.ts';
import type { AppDeps } from '../../../services/deps.ts';

/** The window of the endpoints that take no dates: the 30 days ending today. */
export const ANALYSIS_WINDOW_DAYS = 30;

export const nameParam = z.string().min(1).max(255);

export interface Caller {
  scope: ReadScope;
  today: string;
  userId: number;
}

export const callerOf = (deps: AppDeps, req: Request): Caller => ({
  scope: readScope(req.auth.user),
  today: dayOf(deps.now()),
  userId: req.auth.user.id,
});

export type Reads = ReturnType<typeof analyticsReadRepository>;
export const readsOf = (deps: AppDeps): Reads => analyticsReadRepository(deps.database.sql);

/** Per-tool comparison over usage cells: totals, tokens per request, share of all tokens. */
export function toolComparison(cells: readonly UsageCell[]) {
  const all = totalOf(cells).tokens;
  return sumBy(cells, (c) => c.toolName).map(([toolName, a]) => {
    const mine = cells.filter((c) => c.toolName === toolName);
    return {
      tool_name: toolName,
      ...amountsView(a),
      tokens_per_request: ratio(a.tokens, a.requests),
      output_input_ratio: ratio(a.outputTokens, a.inputTokens),
      share_percent: ratio(a.tokens * 100, all),
      active_days: new Set(mine.filter((c) => c.tokens > 0 || c.requests > 0).map((c) => c.date)).size,
      hosts: [...new Set(mine.map((c) => c.hostName))].sort(),
    };
  });
}

export const userView = (u: UserTotal) => ({
  user_id: u.userId,
  username: u.username,
  tenant_id: u.tenantId,
  ...amountsView(u),
  active_days: u.activeDays,
});

export const anomalyView = (a: Anomaly) => ({
  type: a.type,
  severity: a.severity,
  user_id: a.userId,
  username: a.username,
  tenant_id: a.tenantId,
  date: a.date,
  tokens: a.tokens,
  baseline_median: a.baselineMedian,
  mad: a.mad,
  z_score: a.zScore,
});

/** Anomalies of the window (robust z-score per user over user_daily_stats). */
export async function anomaliesIn(reads: Reads, scope: ReadScope, w: DayWindow): Promise<Anomaly[]> {
  return detectAnomalies(await reads.userDays(scope, w));
}

const recordView = (r: AnomalyRecord, created: boolean) => ({
  id: r.id,
  anomaly_type: r.anomalyType,
  affected_users_hash: r.affectedUsersHash,
  status: r.status,
  processed_by: r.processedBy,
  processed_at: r.processedAt,
  newly_recorded: created,
});

/**
 * Records every anomaly group in anomaly_status (once per type, day, tenant and affected users) and
 * returns each anomaly with its record.
 */
export async function recordAnomalies(deps: AppDeps, anomalies: readonly Anomaly[], processedBy: number) {
  const repo = anomalyStatusRepository(deps.database);
  const out = new Map<Anomaly, ReturnType<typeof recordView>>();
  for (const g of groupAnomalies(anomalies)) {
    const { record, created } = await repo.record(
      { anomalyType: g.key, affectedUsersHash: g.hash, status: 'detected', processedBy },
      deps.now(),
    );
    if (created)
      await raiseAnomalyAlert(deps, {
        recordId: record.id,
        anomalyType: g.type,
        date: g.date,
        tenantId: g.tenantId ?? null,
        users: g.userIds.length,
        at: deps.now(),
      });
    const view = recordView(record, created);
    for (const a of g.members) out.set(a, view);
  }
  return out;
}

export interface WindowSummary {
  window: DayWindow;
  cells: UsageCell[];
  users: UserTotal[];
  messages: { messages: number; requests: number; senders: number; users: number };
}

/** The usage, per-user totals and message counts of a window. */
export async function summarise(
  reads: Reads,
  scope: ReadScope,
  w: DayWindow,
  host?: string,
): Promise<WindowSummary> {
  const [cells, userDays, messages] = await Promise.all([
    reads.usageCells(scope, { ...w, host }),
    reads.userDays(scope, { ...w, host }),
    reads.messageTotals(scope, { ...w, host }),
  ]);
  return { window: w, cells, users: userTotals(userDays), messages };
}

export const summaryView = (s: WindowSummary) => {
  const t = totalOf(s.cells);
  return {
    ...amountsView(t),
    cache_tokens: s.cells.reduce((sum, c) => sum + c.cacheTokens, 0),
    messages: s.messages.messages,
    active_users: s.users.filter((u) => u.activeDays > 0).length,
    tokens_per_request: ratio(t.tokens, t.requests),
  };
};

/** Rule-based recommendations from the 30 days ending today. */
export async function recommendationsFor(
  reads: Reads,
  scope: ReadScope,
  today: string,
): Promise<{ window: DayWindow; recommendations: Recommendation[]; basis: Record<string, unknown> }> {
  const w = windowEnding(today, ANALYSIS_WINDOW_DAYS);
  const [s, anomalies, everyone] = await Promise.all([
    summarise(reads, scope, w),
    anomaliesIn(reads, scope, w),
    reads.users(scope),
  ]);
  const total = totalOf(s.cells);
  const series = dailySeries(s.cells, w.start, w.end);
  const sumOf = (rows: typeof series) => rows.reduce((a, r) => a + r.tokens, 0);
  const last7 = sumOf(series.slice(-7));
  const prev7 = sumOf(series.slice(-14, -7));
  const active = s.users.filter((u) => u.tokens > 0);
  const activeIds = new Set(active.map((u) => u.userId));
  const userTokens = active.reduce((a, u) => a + u.tokens, 0);
  const basis = {
    anomalies: anomalies.length,
    top_user_share: active.length ? ratio(active[0]!.tokens, userTokens) : 0,
    active_users: active.length,
    inactive_users: everyone.filter((u) => !activeIds.has(u.id)).length,
    tokens_per_request: ratio(total.tokens, total.requests),
    weekly_change_percent: changePercent(prev7, last7),
  };
  const recommendations = recommend({
    anomalies: basis.anomalies,
    topUserShare: basis.top_user_share,
    activeUsers: basis.active_users,
    inactiveUsers: basis.inactive_users,
    tools: toolComparison(s.cells).map((t) => ({
      toolName: t.tool_name,
      tokensPerRequest: t.tokens_per_request,
    })),
    overallTokensPerRequest: basis.tokens_per_request,
    weeklyChangePercent: basis.weekly_change_percent,
  });
  return { window: w, recommendations, basis };
}
