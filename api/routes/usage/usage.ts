// The "Usage" table of spec document 2: token and request figures by tool, day and host, read from
// daily_usage (tokens: every source, including the model proxy and usage reports) and daily_messages
// (requests, rule 3: assistant messages), inside the caller's tenant scope (rule 5). Permission:
// view_dashboard. Response bodies the spec leaves open are documented in docs/administrators/usage-analytics-and-roi.md "Reading usage".
//
//   GET /api/summary?host                       {total_tokens, total_input_tokens, total_output_tokens,
//                                               total_requests, tools: [{tool_name, tokens, requests}]}
//   GET /api/today?host&tool                    {date, totals..., tools: [...]}
//   GET /api/date/:date_str?host&tool           the same for one day
//   GET /api/tool/:tool_name/:days?host         {tool_name, days, start, end, totals..., daily: [...]}
//   GET /api/range?start&end&tool&host          {start, end, totals..., tools: [...], daily: [...]}
//   GET /api/tools, /api/hosts                  {tools: [names]}, {hosts: [names]}
//   GET /api/trend?start&end&host               {start, end, trend: [{date, tokens, ..., requests}]}
// POST /api/summary/refresh lives elsewhere (the recompute).
import { type Request, Router } from 'express';
import { z } from 'zod';
import { requestReadRepository } from '../../../db/repositories/usage/read-requests.ts';
import { type UsageFilter, usageReadRepository } from '../../../db/repositories/usage/read-usage.ts';
import type { ReadScope } from '../../../domain/tenant-scope.ts';
import { lastDays, MAX_RANGE_DAYS, resolveRange } from '../../../domain/usage/read-dates.ts';
import { byDay, byTool } from '../../../domain/usage/read-figures.ts';
import type { AppDeps } from '../../../services/deps.ts';
import { authenticate, requirePermission } from '../../middleware/auth.ts';
import { endpoint } from '../../openapi/endpoint.ts';
import { count, day, dayFigures, listOf, toolFigures, usageTotals } from '../../openapi/shapes.ts';
import { calendarDate, hostFilter, name, rangeQuery, readContext, toolFilter } from './query.ts';

const hostQuery = z.object(hostFilter);
const hostToolQuery = z.object({ ...hostFilter, ...toolFilter });
const rangeToolQuery = z.object({ ...rangeQuery, ...hostFilter, ...toolFilter });
const trendQuery = z.object({ ...rangeQuery, ...hostFilter });
const dateParams = z.object({ date_str: calendarDate });
const toolDaysParams = z.object({
  tool_name: name(100),
  // A positive integer; more than a range may hold is cut to MAX_RANGE_DAYS.
  days: z
    .string()
    .refine((v) => /^[0-9]{1,9}$/.test(v) && Number(v) >= 1, 'must be a positive integer')
    .transform((v) => Math.min(Number(v), MAX_RANGE_DAYS)),
});

const oneDayAnswer = z.looseObject({ date: day, ...usageTotals, tools: z.array(toolFigures) });

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const getSummary = endpoint({
  tags: ['usage'],
  query: hostQuery,
  responses: {
    200: z.looseObject({
      total_tokens: count,
      total_input_tokens: count,
      total_output_tokens: count,
      total_requests: count,
      tools: z.array(z.looseObject({ tool_name: z.string(), tokens: count, requests: count })),
    }),
  },
});
const getToday = endpoint({ tags: ['usage'], query: hostToolQuery, responses: { 200: oneDayAnswer } });
const getDateStr = endpoint({
  tags: ['usage'],
  params: dateParams,
  query: hostToolQuery,
  responses: { 200: oneDayAnswer },
});
const getToolName = endpoint({
  tags: ['usage'],
  params: toolDaysParams,
  query: hostQuery,
  responses: {
    200: z.looseObject({
      tool_name: z.string(),
      days: count,
      start: day,
      end: day,
      ...usageTotals,
      daily: z.array(dayFigures),
    }),
  },
});
const getRange = endpoint({
  tags: ['usage'],
  query: rangeToolQuery,
  responses: {
    200: z.looseObject({
      start: day,
      end: day,
      ...usageTotals,
      tools: z.array(toolFigures),
      daily: z.array(dayFigures),
    }),
  },
});
const getTools = endpoint({ tags: ['usage'], responses: { 200: listOf('tools', z.string()) } });
const getHosts = endpoint({ tags: ['usage'], responses: { 200: listOf('hosts', z.string()) } });
const getTrend = endpoint({
  tags: ['usage'],
  query: trendQuery,
  responses: { 200: z.looseObject({ start: day, end: day, trend: z.array(dayFigures) }) },
});

export function usageRouter(deps: AppDeps): Router {
  const r = Router();
  const usage = usageReadRepository(deps.database.sql);
  const requests = requestReadRepository(deps.database.sql);
  const guard = [authenticate(deps), requirePermission('view_dashboard')];

  /** Per-tool figures and totals of a filter. */
  async function toolFigures(scope: ReadScope, f: UsageFilter) {
    const [tokens, counts] = await Promise.all([usage.tokensByTool(scope, f), requests.byTool(scope, f)]);
    return byTool(tokens, counts);
  }

  /** One entry per day of [start, end]. */
  async function dayFigures(scope: ReadScope, f: UsageFilter & { start: string; end: string }) {
    const [tokens, counts] = await Promise.all([usage.tokensByDay(scope, f), requests.byDay(scope, f)]);
    return byDay(f.start, f.end, tokens, counts);
  }

  /**
   * Per-tool figures, totals and one entry per day of [start, end]: the request counts of both come
   * from one read of the range's messages (byDayAndTool), the same numbers as toolFigures + dayFigures.
   */
  async function rangeFigures(scope: ReadScope, f: UsageFilter & { start: string; end: string }) {
    const [toolTokens, dayTokens, counts] = await Promise.all([
      usage.tokensByTool(scope, f),
      usage.tokensByDay(scope, f),
      requests.byDayAndTool(scope, f),
    ]);
    return {
      ...byTool(toolTokens, counts.byTool),
      daily: byDay(f.start, f.end, dayTokens, counts.byDay),
    };
  }

  async function oneDay(req: Request, date: string, q: { host?: string; tool?: string }) {
    const { scope } = readContext(deps, req);
    const { totals, tools } = await toolFigures(scope, {
      start: date,
      end: date,
      host: q.host,
      tool: q.tool,
    });
    return { date, ...totals, tools };
  }

  r.get('/api/summary', getSummary, ...guard, async (req, res) => {
    const q = getSummary.query(req);
    const { totals, tools } = await toolFigures(readContext(deps, req).scope, { host: q.host });
    res.json({
      total_tokens: totals.total_tokens,
      total_input_tokens: totals.total_input_tokens,
      total_output_tokens: totals.total_output_tokens,
      total_requests: totals.total_requests,
      tools: tools.map((t) => ({ tool_name: t.tool_name, tokens: t.tokens, requests: t.requests })),
    });
  });

  r.get('/api/today', getToday, ...guard, async (req, res) => {
    const q = getToday.query(req);
    res.json(await oneDay(req, readContext(deps, req).today, q));
  });

  r.get('/api/date/:date_str', getDateStr, ...guard, async (req, res) => {
    const { date_str } = getDateStr.params(req);
    const q = getDateStr.query(req);
    res.json(await oneDay(req, date_str, q));
  });

  r.get('/api/tool/:tool_name/:days', getToolName, ...guard, async (req, res) => {
    const p = getToolName.params(req);
    const q = getToolName.query(req);
    const { scope, today } = readContext(deps, req);
    const f = { ...lastDays(today, p.days), tool: p.tool_name, host: q.host };
    const { totals, daily } = await rangeFigures(scope, f);
    res.json({ tool_name: p.tool_name, days: p.days, start: f.start, end: f.end, ...totals, daily });
  });

  r.get('/api/range', getRange, ...guard, async (req, res) => {
    const q = getRange.query(req);
    const { scope, today } = readContext(deps, req);
    const f = { ...resolveRange(q, today, 7), tool: q.tool, host: q.host };
    const { totals, tools, daily } = await rangeFigures(scope, f);
    res.json({ start: f.start, end: f.end, ...totals, tools, daily });
  });

  r.get('/api/tools', getTools, ...guard, async (req, res) => {
    res.json({ tools: await usage.names(readContext(deps, req).scope, 'tool_name') });
  });

  r.get('/api/hosts', getHosts, ...guard, async (req, res) => {
    res.json({ hosts: await usage.names(readContext(deps, req).scope, 'host_name') });
  });

  r.get('/api/trend', getTrend, ...guard, async (req, res) => {
    const q = getTrend.query(req);
    const { scope, today } = readContext(deps, req);
    const f = { ...resolveRange(q, today, 30), host: q.host };
    res.json({ start: f.start, end: f.end, trend: await dayFigures(scope, f) });
  });

  return r;
}
