// The "Request statistics" table of spec document 2. A request is one assistant message in
// daily_messages (rule 3), counted inside the caller's tenant scope (rule 5). Permission:
// view_dashboard. Bodies beyond `today` (fixed by the spec) are documented in docs/administrators/usage-analytics-and-roi.md "Reading usage".
//
//   GET /api/usage/request/today                       {date, total_requests, by_tool: {tool: n}, _meta}
//   GET /api/usage/request/trend?start&end&host        {start, end, total_requests, trend: [{date, requests}]}
//   GET /api/usage/request/by-tool?start&end&host      {start, end, total_requests, by_tool: {tool: n}}
//   GET /api/usage/request/by-user?date&host           {date, total_requests, users: [{user_id, user_name, requests, tokens}]}
//   GET /api/usage/request/user/:user_name/trend?start&end&host
//                                                      {user_name, user_id, start, end, total_requests, trend}
//   GET /api/usage/request/monthly?year&month&host     {year, month, start, end, total_requests, by_tool, daily}
import { Router } from 'express';
import { z } from 'zod';
import { requestReadRepository } from '../../../db/repositories/usage/read-requests.ts';
import { monthRange, resolveRange } from '../../../domain/usage/read-dates.ts';
import { requestsByDay, sortedObject } from '../../../domain/usage/read-figures.ts';
import type { AppDeps } from '../../../services/deps.ts';
import { authenticate, requirePermission } from '../../middleware/auth.ts';
import { endpoint } from '../../openapi/endpoint.ts';
import { anyObject, count, day, nullableInt, nullableString } from '../../openapi/shapes.ts';
import { calendarDate, hostFilter, name, rangeQuery, readContext } from './query.ts';

export const REQUEST_DEFINITION_META = {
  definition: 'One request is one assistant response message (role "assistant").',
  source: 'daily_messages',
  note: 'Counted from stored messages, proxied model calls included (each is one assistant row); the request_count of uploaded usage reports is not counted, as a report has no messages.',
  status: 'implemented',
} as const;

const rangeHost = z.object({ ...rangeQuery, ...hostFilter });
const byUserQuery = z.object({ date: calendarDate.optional(), ...hostFilter });
const userParams = z.object({ user_name: name() });
const monthlyQuery = z.object({
  year: z.coerce.number('must be an integer').int('must be an integer').min(1970).max(9999).optional(),
  month: z.coerce.number('must be an integer').int('must be an integer').min(1).max(12).optional(),
  ...hostFilter,
});

const total = (m: ReadonlyMap<string, number>) => [...m.values()].reduce((a, n) => a + n, 0);

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const byToolCounts = z.record(z.string(), count);
const requestDays = z.array(z.looseObject({ date: day, requests: count }));
const getUsageRequestToday = endpoint({
  tags: ['usage'],
  responses: {
    200: z.looseObject({ date: day, total_requests: count, by_tool: byToolCounts, _meta: anyObject }),
  },
});
const getUsageRequestTrend = endpoint({
  tags: ['usage'],
  query: rangeHost,
  responses: { 200: z.looseObject({ start: day, end: day, total_requests: count, trend: requestDays }) },
});
const getUsageRequestByTool = endpoint({
  tags: ['usage'],
  query: rangeHost,
  responses: { 200: z.looseObject({ start: day, end: day, total_requests: count, by_tool: byToolCounts }) },
});
const getUsageRequestByUser = endpoint({
  tags: ['usage'],
  query: byUserQuery,
  responses: {
    200: z.looseObject({
      date: day,
      total_requests: count,
      users: z.array(
        z.looseObject({ user_id: nullableInt, user_name: nullableString, requests: count, tokens: count }),
      ),
    }),
  },
});
const getUsageRequestUserNameTrend = endpoint({
  tags: ['usage'],
  params: userParams,
  query: rangeHost,
  responses: {
    200: z.looseObject({
      user_name: z.string(),
      user_id: nullableInt,
      start: day,
      end: day,
      total_requests: count,
      trend: requestDays,
    }),
  },
});
const getUsageRequestMonthly = endpoint({
  tags: ['usage'],
  query: monthlyQuery,
  responses: {
    200: z.looseObject({
      year: count,
      month: count,
      start: day,
      end: day,
      total_requests: count,
      by_tool: byToolCounts,
      daily: requestDays,
    }),
  },
});

export function requestStatsRouter(deps: AppDeps): Router {
  const r = Router();
  const requests = requestReadRepository(deps.database.sql);
  const guard = [authenticate(deps), requirePermission('view_dashboard')];

  r.get('/api/usage/request/today', getUsageRequestToday, ...guard, async (req, res) => {
    const { scope, today } = readContext(deps, req);
    const counts = await requests.byTool(scope, { start: today, end: today });
    res.json({
      date: today,
      total_requests: total(counts),
      by_tool: sortedObject(counts),
      _meta: REQUEST_DEFINITION_META,
    });
  });

  r.get('/api/usage/request/trend', getUsageRequestTrend, ...guard, async (req, res) => {
    const q = getUsageRequestTrend.query(req);
    const { scope, today } = readContext(deps, req);
    const range = resolveRange(q, today, 30);
    const counts = await requests.byDay(scope, { ...range, host: q.host });
    res.json({
      ...range,
      total_requests: total(counts),
      trend: requestsByDay(range.start, range.end, counts),
    });
  });

  r.get('/api/usage/request/by-tool', getUsageRequestByTool, ...guard, async (req, res) => {
    const q = getUsageRequestByTool.query(req);
    const { scope, today } = readContext(deps, req);
    const range = resolveRange(q, today, 30);
    const counts = await requests.byTool(scope, { ...range, host: q.host });
    res.json({ ...range, total_requests: total(counts), by_tool: sortedObject(counts) });
  });

  r.get('/api/usage/request/by-user', getUsageRequestByUser, ...guard, async (req, res) => {
    const q = getUsageRequestByUser.query(req);
    const { scope, today } = readContext(deps, req);
    const date = q.date ?? today;
    const users = await requests.byUser(scope, { start: date, end: date, host: q.host });
    res.json({
      date,
      total_requests: users.reduce((a, u) => a + u.requests, 0),
      users: users.map((u) => ({
        user_id: u.userId,
        user_name: u.userName,
        requests: u.requests,
        tokens: u.tokens,
      })),
    });
  });

  r.get(
    '/api/usage/request/user/:user_name/trend',
    getUsageRequestUserNameTrend,
    ...guard,
    async (req, res) => {
      const { user_name } = getUsageRequestUserNameTrend.params(req);
      const q = getUsageRequestUserNameTrend.query(req);
      const { scope, today } = readContext(deps, req);
      const range = resolveRange(q, today, 30);
      // A user of that name in the caller's scope, else an unknown sender of that name (tenant-scoped
      // through the messages themselves). A user outside the scope reads as an unknown sender.
      const userId = await requests.userInScope(scope, user_name);
      const counts = await requests.byDay(scope, {
        ...range,
        host: q.host,
        ...(userId !== null ? { userId } : { unknownSender: user_name }),
      });
      res.json({
        user_name,
        user_id: userId,
        ...range,
        total_requests: total(counts),
        trend: requestsByDay(range.start, range.end, counts),
      });
    },
  );

  r.get('/api/usage/request/monthly', getUsageRequestMonthly, ...guard, async (req, res) => {
    const q = getUsageRequestMonthly.query(req);
    const { scope, today } = readContext(deps, req);
    const year = q.year ?? Number(today.slice(0, 4));
    const month = q.month ?? Number(today.slice(5, 7));
    const range = monthRange(year, month);
    const f = { ...range, host: q.host };
    const [daily, tools] = await Promise.all([requests.byDay(scope, f), requests.byTool(scope, f)]);
    res.json({
      year,
      month,
      ...range,
      total_requests: total(daily),
      by_tool: sortedObject(tools),
      daily: requestsByDay(range.start, range.end, daily),
    });
  });

  return r;
}
