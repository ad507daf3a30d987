// The SQL of `/api/report/my-usage`: one user's messages summed per day and tool (requests by rule 3:
// assistant messages), over the (user_id, date) index. The user is the caller, so no tenant scope
// applies beyond the user id itself.
import type { DayRange } from '../../../domain/usage/read-dates.ts';
import type { RawSql } from '../../client.ts';
import { REQUESTS_OF } from './read-requests.ts';
import { num } from './read-where.ts';

export function myUsageRepository(db: RawSql) {
  return {
    async byDayAndTool(userId: number, range: DayRange) {
      const rows = await db.query<Record<string, unknown>>(
        `SELECT date, tool_name, COALESCE(SUM(tokens_used), 0) AS tokens,
                COALESCE(SUM(input_tokens), 0) AS input_tokens, COALESCE(SUM(output_tokens), 0) AS output_tokens,
                ${REQUESTS_OF('daily_messages')} AS requests, COUNT(*) AS messages
         FROM daily_messages WHERE user_id = ? AND date >= ? AND date <= ?
         GROUP BY date, tool_name`,
        [userId, range.start, range.end],
      );
      return rows.map((r) => ({
        date: r.date as string,
        toolName: r.tool_name as string,
        tokens: num(r.tokens),
        inputTokens: num(r.input_tokens),
        outputTokens: num(r.output_tokens),
        requests: num(r.requests),
        messages: num(r.messages),
      }));
    },
  };
}
