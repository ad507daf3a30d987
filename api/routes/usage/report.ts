// GET /api/usage/report?start_date&end_date&group_by=user|tool|model|tenant[&user_id&tool_name]: the
// usage report of the web app's /reports/usage page: one row per user, tool, model or tenant with
// tokens (input, output, total), requests (rule 3) and the estimated cost at the effective prices,
// most tokens first, plus totals. The figures are the ROI module's (api/routes/roi.ts loadRoi: the
// same cells, scope, own-figures rule and price table), grouped by domain/usage/report-rows.ts, so
// this report, /api/roi/by-user and /api/roi/cost-breakdown never disagree.
//
// Who sees what: view_analysis (every role but readonly). Administrators and managers see their
// tenant (system administrators every tenant); a plain user sees only their own figures (no
// unattributed remainder; another user_id is a 403). Grouping by tenant is for system administrators
// (anyone else sees one tenant: a 403 says so rather than a one-row answer).
import { Router } from 'express';
import { z } from 'zod';
import { roiRepository } from '../../../db/repositories/roi.ts';
import { daySchema } from '../../../domain/analytics/days.ts';
import { ForbiddenError } from '../../../domain/errors.ts';
import { roiQuerySchema } from '../../../domain/roi/assumptions.ts';
import { readScope } from '../../../domain/tenant-scope.ts';
import { REPORT_GROUPS, reportRows, reportTotals } from '../../../domain/usage/report-rows.ts';
import type { AppDeps } from '../../../services/deps.ts';
import { authenticate, requirePermission } from '../../middleware/auth.ts';
import { endpoint } from '../../openapi/endpoint.ts';
import { loadRoi, roiEnvelope } from '../roi.ts';

export const TENANT_GROUPING_REFUSED = 'Grouping by tenant is for system administrators';

const reportQuery = z.object({
  start_date: daySchema.optional(),
  end_date: daySchema.optional(),
  group_by: z.enum(REPORT_GROUPS).default('user'),
  user_id: roiQuerySchema.shape.user_id,
  tool_name: roiQuerySchema.shape.tool_name,
});

const n = z.number();
const figures = { input_tokens: n, output_tokens: n, tokens: n, requests: n, cost: n };
const getUsageReport = endpoint({
  tags: ['usage'],
  summary: 'Tokens, requests and estimated cost grouped by user, tool, model or tenant',
  query: reportQuery,
  responses: {
    200: z.looseObject({
      ...roiEnvelope,
      group_by: z.enum(REPORT_GROUPS),
      rows: z.array(
        z.looseObject({ key: z.union([z.string(), n]).nullable(), label: z.string(), ...figures }),
      ),
      totals: z.looseObject(figures),
    }),
  },
});

export function usageReportPageRouter(deps: AppDeps): Router {
  const r = Router();
  r.get(
    '/api/usage/report',
    getUsageReport,
    authenticate(deps),
    requirePermission('view_analysis'),
    async (req, res) => {
      const q = getUsageReport.query(req);
      if (q.group_by === 'tenant' && readScope(req.auth.user).kind !== 'all')
        throw new ForbiddenError(TENANT_GROUPING_REFUSED);
      const x = await loadRoi(deps, req);
      const tenantIds = [...new Set(x.priced.map((c) => c.tenantId).filter((t): t is number => t != null))];
      const names =
        q.group_by === 'tenant'
          ? await roiRepository(deps.database.sql).tenantNames(tenantIds)
          : new Map<number, string>();
      res.json({
        ...x.envelope,
        group_by: q.group_by,
        rows: reportRows(x.priced, q.group_by, names),
        totals: reportTotals(x.priced),
      });
    },
  );
  return r;
}
