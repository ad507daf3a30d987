// GET /api/report/my-usage?start&end (spec document 2, "Upload, fetch and reports"): the caller's own
// usage only, from the messages attributed to them (daily_messages.user_id; requests by rule 3).
// start defaults to 30 days ago, end to today. Any authenticated user may read their own figures.
//   {user_id, username, start, end, total_tokens, total_input_tokens, total_output_tokens,
//    total_requests, message_count, tools: [{tool_name, tokens, requests, messages}],
//    daily: [{date, tokens, requests, messages}]}
import { Router } from 'express';
import { z } from 'zod';
import { myUsageRepository } from '../../../db/repositories/usage/read-my-usage.ts';
import { eachDay, resolveRange } from '../../../domain/usage/read-dates.ts';
import type { AppDeps } from '../../../services/deps.ts';
import { authenticate } from '../../middleware/auth.ts';
import { endpoint } from '../../openapi/endpoint.ts';
import { count, day } from '../../openapi/shapes.ts';
import { rangeQuery, readContext } from './query.ts';

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const getReportMyUsage = endpoint({
  tags: ['usage'],
  query: z.object(rangeQuery),
  responses: {
    200: z.looseObject({
      user_id: count,
      username: z.string(),
      start: day,
      end: day,
      total_tokens: count,
      total_input_tokens: count,
      total_output_tokens: count,
      total_requests: count,
      message_count: count,
      tools: z.array(
        z.looseObject({ tool_name: z.string(), tokens: count, requests: count, messages: count }),
      ),
      daily: z.array(z.looseObject({ date: day, tokens: count, requests: count, messages: count })),
    }),
  },
});

export function myUsageRouter(deps: AppDeps): Router {
  const r = Router();
  const repo = myUsageRepository(deps.database.sql);

  r.get('/api/report/my-usage', getReportMyUsage, authenticate(deps), async (req, res) => {
    const q = getReportMyUsage.query(req);
    const range = resolveRange(q, readContext(deps, req).today, 30);
    const me = req.auth.user;
    const rows = await repo.byDayAndTool(me.id, range);
    const zero = () => ({ tokens: 0, input_tokens: 0, output_tokens: 0, requests: 0, messages: 0 });
    const days = new Map(eachDay(range.start, range.end).map((d) => [d, zero()]));
    const tools = new Map<string, ReturnType<typeof zero>>();
    const total = zero();
    for (const row of rows) {
      const t = tools.get(row.toolName) ?? zero();
      tools.set(row.toolName, t);
      for (const acc of [days.get(row.date)!, t, total]) {
        acc.tokens += row.tokens;
        acc.input_tokens += row.inputTokens;
        acc.output_tokens += row.outputTokens;
        acc.requests += row.requests;
        acc.messages += row.messages;
      }
    }
    res.json({
      user_id: me.id,
      username: me.username,
      ...range,
      total_tokens: total.tokens,
      total_input_tokens: total.input_tokens,
      total_output_tokens: total.output_tokens,
      total_requests: total.requests,
      message_count: total.messages,
      tools: [...tools.entries()]
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([tool_name, t]) => ({
          tool_name,
          tokens: t.tokens,
          requests: t.requests,
          messages: t.messages,
        })),
      daily: [...days.entries()].map(([date, d]) => ({
        date,
        tokens: d.tokens,
        requests: d.requests,
        messages: d.messages,
      })),
    });
  });

  return r;
}
