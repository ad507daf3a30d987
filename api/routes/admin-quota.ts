// GET /api/admin/quota/usage (spec document 2, Administration: "quota usage of all users"; body not
// shown by the spec, so chosen here): every live user's use of the day and month against their
// limits, from the one accounting (services/quota.ts statusOfAll). Admin only; tenant-scoped like
// every admin read: a tenant admin sees its tenant's users, a system administrator all users.
//   ?date=YYYY-MM-DD   the day (and its month) to report; default today (UTC)
import { Router } from 'express';
import { z } from 'zod';
import { readScope } from '../../domain/tenant-scope.ts';
import { isCalendarDate } from '../../domain/usage/ingest-rows.ts';
import type { AppDeps } from '../../services/deps.ts';
import { quotaServiceFor } from '../../services/quota.ts';
import { authenticate, requireAdmin } from '../middleware/auth.ts';
import { endpoint } from '../openapi/endpoint.ts';
import { count, day } from '../openapi/shapes.ts';
import { allStatusView, quotaGuarded } from './quota.ts';
import { userQuotaAnswer } from './quota-answers.ts';

const usageQuery = z.object({
  date: z.string().refine(isCalendarDate, 'must be a date YYYY-MM-DD').optional(),
});

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const getAdminQuotaUsage = endpoint({
  tags: ['admin-quota'],
  query: usageQuery,
  responses: {
    200: z.looseObject({ date: day, month: day, users: z.array(userQuotaAnswer), total: count }),
  },
  errors: [503],
});

export function adminQuotaRouter(deps: AppDeps): Router {
  const r = Router();
  const quota = quotaServiceFor(deps);

  r.get('/api/admin/quota/usage', getAdminQuotaUsage, authenticate(deps), requireAdmin, async (req, res) => {
    const q = getAdminQuotaUsage.query(req);
    const at = q.date ? new Date(`${q.date}T12:00:00Z`) : deps.now();
    const { date, month, users } = allStatusView(
      await quotaGuarded(() => quota.statusOfAll(readScope(req.auth.user), at)),
    );
    res.json({ date, month, users, total: users.length });
  });

  return r;
}
