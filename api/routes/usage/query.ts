// Query parsing shared by the usage read routers (usage.ts, messages.ts, request-stats.ts,
// my-usage.ts): the zod pieces for host/tool/sender filters, calendar dates, pagination, and the
// caller's read scope and today. Dates are checked here only for shape; ranges (defaults, order,
// length) are decided in domain/usage/read-dates.ts.
import type { Request } from 'express';
import { z } from 'zod';
import { type ReadScope, readScope } from '../../../domain/tenant-scope.ts';
import { isCalendarDate } from '../../../domain/usage/ingest-rows.ts';
import { dayOf } from '../../../domain/usage/read-dates.ts';
import type { AppDeps } from '../../../services/deps.ts';

/** Default page size of message lists (spec "Limits"), and the cap a larger `limit` is cut to. */
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 500;

export const calendarDate = z.string().refine(isCalendarDate, 'must be a date YYYY-MM-DD');
/** A name filter (tool, host, sender): non-empty, bounded. */
export const name = (max = 255) => z.string().min(1, 'must not be empty').max(max);

export const hostFilter = { host: name().optional() };
export const toolFilter = { tool: name(100).optional() };
export const rangeQuery = { start: z.string().optional(), end: z.string().optional() };

/** limit (default 50; above MAX_PAGE_SIZE it is cut to it) and offset (default 0). */
export const page = {
  limit: z.coerce
    .number('must be an integer')
    .int('must be an integer')
    .min(1, 'must be at least 1')
    .default(DEFAULT_PAGE_SIZE)
    .transform((n) => Math.min(n, MAX_PAGE_SIZE)),
  offset: z.coerce
    .number('must be an integer')
    .int('must be an integer')
    .min(0, 'must not be negative')
    .max(10_000_000)
    .default(0),
};

/** What every read needs from the request: the caller's tenant scope and today's date. */
export function readContext(deps: AppDeps, req: Request): { scope: ReadScope; today: string } {
  return { scope: readScope(req.auth.user), today: dayOf(deps.now()) };
}
