// Analysis reads (spec document 2, "Analysis and analytics", the /api/analysis/* rows): every one
// needs view_analysis and is tenant-scoped (rule 5): system administrators see every tenant, everyone
// else their own, a user without a tenant sees nothing. Endpoints without dates read the 30 days
// ending today (UTC). Response bodies are not given by the spec; they are documented in the README,
// section "Analysis and analytics". The deprecated /api/analysis/forecast lives in forecast.ts.
import { Router } from 'express';
import { z } from 'zod';
import { ANOMALY_METHOD, ANOMALY_TYPES, SEVERITIES } from '../../../domain/analytics/anomalies.ts';
import { addDays, daySchema, daysOf, resolveWindow, windowEnding } from '../../../domain/analytics/days.ts';
import {
  amountsView,
  changePercent,
  dailySeries,
  ratio,
  sumBy,
  totalOf,
  userTotals,
  weekdayOf,
  zero,
} from '../../../domain/analytics/figures.ts';
import { SEGMENTS, segmentUsers } from '../../../domain/analytics/insights.ts';
import type { AppDeps } from '../../../services/deps.ts';
import { authenticate, requirePermission } from '../../middleware/auth.ts';
import { endpoint } from '../../openapi/endpoint.ts';
import * as A from './answers.ts';
import {
  ANALYSIS_WINDOW_DAYS,
  anomaliesIn,
  anomalyView,
  callerOf,
  nameParam,
  readsOf,
  recommendationsFor,
  recordAnomalies,
  summarise,
  summaryView,
  toolComparison,
  userView,
} from './figures.ts';

const batchQuery = z.object({
  start: daySchema.optional(),
  end: daySchema.optional(),
  host: nameParam.optional(),
});
const hourlyQuery = z.object({
  date: daySchema.optional(),
  tool: nameParam.optional(),
  host: nameParam.optional(),
});
const rankingQuery = z.object({ limit: z.coerce.number().int().min(1).max(100).default(10) });
const anomalyQuery = z.object({
  type: z.enum(ANOMALY_TYPES).optional(),
  severity: z.enum(SEVERITIES).optional(),
});
const DAILY_HOURLY_DAYS = 7;

const hoursOf = <R extends { hour: number }>(rows: readonly R[], pick: (r: R) => number): number[] => {
  const out = Array.from({ length: 24 }, () => 0);
  for (const r of rows) out[r.hour]! += pick(r);
  return out;
};

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const getAnalysisBatch = endpoint({
  tags: ['analytics'],
  query: batchQuery,
  responses: { 200: A.batchAnswer },
});
const getAnalysisKeyMetrics = endpoint({ tags: ['analytics'], responses: { 200: A.keyMetricsAnswer } });
const getAnalysisHourlyUsage = endpoint({
  tags: ['analytics'],
  query: hourlyQuery,
  responses: { 200: A.hourlyAnswer },
});
const getAnalysisDailyHourlyUsage = endpoint({
  tags: ['analytics'],
  responses: { 200: A.dailyHourlyAnswer },
});
const getAnalysisPeakUsage = endpoint({ tags: ['analytics'], responses: { 200: A.peakAnswer } });
const getAnalysisConversationStats = endpoint({
  tags: ['analytics'],
  responses: { 200: A.conversationStatsAnswer },
});
const getAnalysisUserSegmentation = endpoint({
  tags: ['analytics'],
  responses: { 200: A.segmentationAnswer },
});
const getAnalysisToolComparison = endpoint({
  tags: ['analytics'],
  responses: { 200: A.toolComparisonAnswer },
});
const getAnalysisAnomalyTrend = endpoint({ tags: ['analytics'], responses: { 200: A.anomalyTrendAnswer } });
const getAnalysisRecommendations = endpoint({
  tags: ['analytics'],
  responses: { 200: A.recommendationsAnswer },
});
const getAnalysisUserRanking = endpoint({
  tags: ['analytics'],
  query: rankingQuery,
  responses: { 200: A.rankingAnswer },
});
const getAnalysisAnomalyDetection = endpoint({
  tags: ['analytics'],
  query: anomalyQuery,
  responses: { 200: A.anomalyDetectionAnswer },
});

export function analysisRouter(deps: AppDeps): Router {
  const r = Router();
  const guard = [authenticate(deps), requirePermission('view_analysis')];
  const reads = readsOf(deps);

  r.get('/api/analysis/batch', getAnalysisBatch, ...guard, async (req, res) => {
    const q = getAnalysisBatch.query(req);
    const c = callerOf(deps, req);
    const w = resolveWindow(q, c.today, ANALYSIS_WINDOW_DAYS);
    const s = await summarise(reads, c.scope, w, q.host);
    res.json({
      start: w.start,
      end: w.end,
      host: q.host ?? null,
      totals: summaryView(s),
      daily: dailySeries(s.cells, w.start, w.end).map((d) => ({ date: d.date, ...amountsView(d) })),
      by_tool: toolComparison(s.cells),
      by_host: sumBy(s.cells, (x) => x.hostName).map(([host_name, a]) => ({ host_name, ...amountsView(a) })),
    });
  });

  r.get('/api/analysis/key-metrics', getAnalysisKeyMetrics, ...guard, async (req, res) => {
    const c = callerOf(deps, req);
    const w = windowEnding(c.today, ANALYSIS_WINDOW_DAYS);
    const prev = windowEnding(addDays(w.start, -1), ANALYSIS_WINDOW_DAYS);
    const [now, before] = await Promise.all([summarise(reads, c.scope, w), summarise(reads, c.scope, prev)]);
    const cur = summaryView(now);
    const old = summaryView(before);
    const today = totalOf(now.cells.filter((x) => x.date === c.today));
    res.json({
      period: w,
      previous_period: prev,
      ...cur,
      avg_daily_tokens: Math.round(cur.tokens / ANALYSIS_WINDOW_DAYS),
      today: { date: c.today, tokens: today.tokens, requests: today.requests },
      previous: {
        tokens: old.tokens,
        requests: old.requests,
        messages: old.messages,
        active_users: old.active_users,
      },
      change_percent: {
        tokens: changePercent(old.tokens, cur.tokens),
        requests: changePercent(old.requests, cur.requests),
        messages: changePercent(old.messages, cur.messages),
        active_users: changePercent(old.active_users, cur.active_users),
      },
    });
  });

  r.get('/api/analysis/hourly-usage', getAnalysisHourlyUsage, ...guard, async (req, res) => {
    const q = getAnalysisHourlyUsage.query(req);
    const c = callerOf(deps, req);
    const date = q.date ?? c.today;
    const rows = await reads.hourCells(c.scope, { start: date, end: date, tool: q.tool, host: q.host });
    const hours = Array.from({ length: 24 }, (_, hour) => {
      const mine = rows.filter((x) => x.hour === hour);
      return { hour, ...amountsView(totalOf(mine)), messages: mine.reduce((s, x) => s + x.messages, 0) };
    });
    const peak = hours.reduce((best, h) => (h.tokens > best.tokens ? h : best), hours[0]!);
    res.json({
      date,
      tool: q.tool ?? null,
      host: q.host ?? null,
      hours,
      totals: { ...amountsView(totalOf(rows)), messages: rows.reduce((s, x) => s + x.messages, 0) },
      peak_hour: peak.tokens > 0 || peak.messages > 0 ? peak.hour : null,
    });
  });

  r.get('/api/analysis/daily-hourly-usage', getAnalysisDailyHourlyUsage, ...guard, async (req, res) => {
    const c = callerOf(deps, req);
    const w = windowEnding(c.today, DAILY_HOURLY_DAYS);
    const rows = await reads.hourCells(c.scope, w);
    res.json({
      start: w.start,
      end: w.end,
      days: daysOf(w.start, w.end).map((date) => {
        const mine = rows.filter((x) => x.date === date);
        return {
          date,
          tokens: mine.reduce((s, x) => s + x.tokens, 0),
          messages: mine.reduce((s, x) => s + x.messages, 0),
          tokens_by_hour: hoursOf(mine, (x) => x.tokens),
          messages_by_hour: hoursOf(mine, (x) => x.messages),
        };
      }),
    });
  });

  r.get('/api/analysis/peak-usage', getAnalysisPeakUsage, ...guard, async (req, res) => {
    const c = callerOf(deps, req);
    const w = windowEnding(c.today, ANALYSIS_WINDOW_DAYS);
    const [hourRows, cells] = await Promise.all([reads.hourCells(c.scope, w), reads.usageCells(c.scope, w)]);
    const tokensByHour = hoursOf(hourRows, (x) => x.tokens);
    const messagesByHour = hoursOf(hourRows, (x) => x.messages);
    const peakHour = tokensByHour.reduce((best, v, h) => (v > tokensByHour[best]! ? h : best), 0);
    const days = dailySeries(cells, w.start, w.end);
    const peakDay = days.reduce((best, d) => (d.tokens > best.tokens ? d : best), days[0]!);
    const byWeekday = sumBy(
      days.map((d) => ({ ...d, weekday: weekdayOf(d.date) })),
      (d) => d.weekday,
    );
    res.json({
      start: w.start,
      end: w.end,
      peak_hour:
        tokensByHour[peakHour]! > 0
          ? { hour: peakHour, tokens: tokensByHour[peakHour], messages: messagesByHour[peakHour] }
          : null,
      peak_day:
        peakDay.tokens > 0
          ? { date: peakDay.date, tokens: peakDay.tokens, requests: peakDay.requests }
          : null,
      peak_weekday: byWeekday[0] && byWeekday[0][1].tokens > 0 ? byWeekday[0][0] : null,
      by_hour: tokensByHour.map((tokens, hour) => ({ hour, tokens, messages: messagesByHour[hour] })),
      by_weekday: byWeekday.map(([weekday, a]) => ({ weekday, tokens: a.tokens, requests: a.requests })),
    });
  });

  r.get('/api/analysis/conversation-stats', getAnalysisConversationStats, ...guard, async (req, res) => {
    const c = callerOf(deps, req);
    const w = windowEnding(c.today, ANALYSIS_WINDOW_DAYS);
    const from = new Date(`${w.start}T00:00:00Z`);
    const before = new Date(`${addDays(w.end, 1)}T00:00:00Z`);
    const [convs, sessions] = await Promise.all([
      reads.conversationSizes(c.scope, w),
      reads.sessionsByStatus(c.scope, from, before),
    ]);
    const messages = convs.reduce((s, x) => s + x.messages, 0);
    const tokens = convs.reduce((s, x) => s + x.tokens, 0);
    const byTool = new Map<string, { conversations: number; messages: number; tokens: number }>();
    for (const x of convs) {
      const t = byTool.get(x.toolName) ?? { conversations: 0, messages: 0, tokens: 0 };
      t.conversations++;
      t.messages += x.messages;
      t.tokens += x.tokens;
      byTool.set(x.toolName, t);
    }
    res.json({
      start: w.start,
      end: w.end,
      conversations: convs.length,
      messages,
      requests: convs.reduce((s, x) => s + x.requests, 0),
      tokens,
      avg_messages_per_conversation: ratio(messages, convs.length),
      avg_tokens_per_conversation: ratio(tokens, convs.length),
      max_messages: convs.reduce((m, x) => Math.max(m, x.messages), 0),
      multi_day_conversations: convs.filter((x) => x.days > 1).length,
      by_tool: [...byTool.entries()]
        .sort((a, b) => b[1].tokens - a[1].tokens || a[0].localeCompare(b[0]))
        .map(([tool_name, t]) => ({ tool_name, ...t })),
      agent_sessions_by_status: Object.fromEntries(sessions.map((x) => [x.status, x.sessions])),
    });
  });

  r.get('/api/analysis/user-segmentation', getAnalysisUserSegmentation, ...guard, async (req, res) => {
    const c = callerOf(deps, req);
    const w = windowEnding(c.today, ANALYSIS_WINDOW_DAYS);
    const [days, everyone] = await Promise.all([reads.userDays(c.scope, w), reads.users(c.scope)]);
    const totals = userTotals(days);
    const known = new Set(totals.map((u) => u.userId));
    for (const u of everyone)
      if (!known.has(u.id))
        totals.push({ userId: u.id, username: u.username, tenantId: u.tenantId, activeDays: 0, ...zero() });
    const seg = segmentUsers(totals);
    const segments = Object.fromEntries(
      SEGMENTS.map((name) => {
        const members = totals.filter((u) => seg.segmentOf(u) === name);
        return [
          name,
          {
            count: members.length,
            tokens: members.reduce((s, u) => s + u.tokens, 0),
            users: members.map(userView),
          },
        ];
      }),
    );
    res.json({
      start: w.start,
      end: w.end,
      method:
        'quartiles (type 7) of per-user token totals: heavy >= p75, light <= p25, moderate between, inactive = no tokens',
      thresholds: { p25: seg.p25, p75: seg.p75 },
      total_users: totals.length,
      segments,
    });
  });

  r.get('/api/analysis/tool-comparison', getAnalysisToolComparison, ...guard, async (req, res) => {
    const c = callerOf(deps, req);
    const w = windowEnding(c.today, ANALYSIS_WINDOW_DAYS);
    res.json({ start: w.start, end: w.end, tools: toolComparison(await reads.usageCells(c.scope, w)) });
  });

  r.get('/api/analysis/anomaly-trend', getAnalysisAnomalyTrend, ...guard, async (req, res) => {
    const c = callerOf(deps, req);
    const w = windowEnding(c.today, ANALYSIS_WINDOW_DAYS);
    const anomalies = await anomaliesIn(reads, c.scope, w);
    res.json({
      start: w.start,
      end: w.end,
      method: ANOMALY_METHOD,
      total: anomalies.length,
      days: daysOf(w.start, w.end).map((date) => {
        const mine = anomalies.filter((a) => a.date === date);
        return {
          date,
          anomalies: mine.length,
          spikes: mine.filter((a) => a.type === 'token_spike').length,
          drops: mine.filter((a) => a.type === 'token_drop').length,
          users_affected: new Set(mine.map((a) => a.userId)).size,
        };
      }),
    });
  });

  r.get('/api/analysis/recommendations', getAnalysisRecommendations, ...guard, async (req, res) => {
    const c = callerOf(deps, req);
    const out = await recommendationsFor(reads, c.scope, c.today);
    res.json({
      start: out.window.start,
      end: out.window.end,
      recommendations: out.recommendations,
      basis: out.basis,
    });
  });

  r.get('/api/analysis/user-ranking', getAnalysisUserRanking, ...guard, async (req, res) => {
    const q = getAnalysisUserRanking.query(req);
    const c = callerOf(deps, req);
    const w = windowEnding(c.today, ANALYSIS_WINDOW_DAYS);
    const ranked = userTotals(await reads.userDays(c.scope, w)).filter((u) => u.tokens > 0 || u.requests > 0);
    res.json({
      start: w.start,
      end: w.end,
      limit: q.limit,
      ranking: ranked.slice(0, q.limit).map((u, i) => ({ rank: i + 1, ...userView(u) })),
    });
  });

  r.get('/api/analysis/anomaly-detection', getAnalysisAnomalyDetection, ...guard, async (req, res) => {
    const q = getAnalysisAnomalyDetection.query(req);
    const c = callerOf(deps, req);
    const w = windowEnding(c.today, ANALYSIS_WINDOW_DAYS);
    const all = await anomaliesIn(reads, c.scope, w);
    // Recorded before filtering, so a record always names the whole group of affected users.
    const records = await recordAnomalies(deps, all, c.userId);
    const shown = all.filter(
      (a) => (!q.type || a.type === q.type) && (!q.severity || a.severity === q.severity),
    );
    res.json({
      start: w.start,
      end: w.end,
      method: ANOMALY_METHOD,
      filters: { type: q.type ?? null, severity: q.severity ?? null },
      count: shown.length,
      anomalies: shown.map((a) => ({ ...anomalyView(a), record: records.get(a) ?? null })),
    });
  });

  return r;
}
