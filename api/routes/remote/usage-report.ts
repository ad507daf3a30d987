// POST /api/remote/usage-report (spec document 1, "Agent install and communication"; payload not
// shown by the spec, so chosen here):
//
//   auth: the session's proxy token, sent as the proxy accepts it (Authorization: Bearer, x-api-key,
//         x-goog-api-key). The report belongs to that token's session; a `session_id` naming another
//         session is refused with 403.
//   body: {report_id: string (1-90 chars, unique per session), session_id?, input_tokens, output_tokens,
//          cache_tokens?, total_tokens? (default input + output), requests? (default 1), model?,
//          machine_id?, via_proxy? (default true)}
//   201 {success: true, duplicate: false, counted}   first time this report_id is seen for the session
//   200 {success: true, duplicate: true, counted: false}   a repeat: nothing is recorded again
//
// Every report is stored in usage_reports (report_id stored as `<session_id>:<report_id>`, so one
// session cannot shadow another's ids). The proxy is the accounting of record for every model call
// that passes through it, so a report counts towards quotas only when it says the usage did NOT pass
// through the proxy (`via_proxy: false`); otherwise it is kept for reconciliation only and a call is
// never counted twice.
import { Router } from 'express';
import { z } from 'zod';
import { usageReportsRepository } from '../../../db/repositories/usage-reports.ts';
import { ForbiddenError, UnauthorizedError } from '../../../domain/errors.ts';
import { proxyTokenService } from '../../../services/proxy-tokens.ts';
import { quotaServiceFor } from '../../../services/quota.ts';
import { writeAudit } from '../../audit.ts';
import type { AppDeps } from '../../deps.ts';
import { parseInput } from '../../middleware/validate.ts';
import { proxyTokenOf } from './llm-proxy.ts';

const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const reportBody = z.object({
  report_id: z.string().trim().min(1).max(90),
  session_id: z.string().max(64).optional(),
  input_tokens: count.default(0),
  output_tokens: count.default(0),
  cache_tokens: count.default(0),
  total_tokens: count.optional(),
  requests: z.number().int().min(0).max(10_000).default(1),
  model: z.string().max(100).optional(),
  machine_id: z.string().max(64).optional(),
  via_proxy: z.boolean().default(true),
});

export function usageReportRouter(deps: AppDeps): Router {
  const r = Router();
  const tokens = proxyTokenService(deps);
  const reports = usageReportsRepository(deps.database);
  const quota = quotaServiceFor(deps);

  r.post('/api/remote/usage-report', async (req, res) => {
    const token = proxyTokenOf(req);
    const verified = token === undefined ? undefined : await tokens.verify(token);
    if (!verified?.ok) {
      await writeAudit(deps, req, {
        action: 'REMOTE_USAGE_REPORT',
        resourceType: 'agent_session',
        success: false,
        userId: null,
        tenantId: null,
        username: null,
        details: { reason: verified ? verified.reason : 'missing_token' },
      });
      throw new UnauthorizedError('A valid proxy token of the session is required');
    }
    const { claims, context } = verified;
    const body = parseInput(reportBody, req.body);
    if (body.session_id !== undefined && body.session_id !== claims.sid) {
      await writeAudit(deps, req, {
        action: 'REMOTE_USAGE_REPORT',
        resourceType: 'agent_session',
        resourceId: claims.sid,
        success: false,
        userId: claims.uid,
        tenantId: context.tenantId,
        username: context.username,
        details: { reason: 'other_session' },
      });
      throw new ForbiddenError("The report names another session than the token's");
    }
    const total = body.total_tokens ?? body.input_tokens + body.output_tokens;
    const fresh = await reports.insertOnce({
      reportId: `${claims.sid}:${body.report_id}`,
      sessionId: claims.sid,
      machineId: body.machine_id ?? context.hostName,
      userId: claims.uid,
      inputTokens: body.input_tokens,
      outputTokens: body.output_tokens,
      model: body.model ?? null,
      receivedAt: deps.now(),
    });
    if (!fresh) {
      res.json({ success: true, duplicate: true, counted: false });
      return;
    }
    const counted = !body.via_proxy;
    if (counted) {
      await quota.recordUsage({
        subject: { userId: claims.uid, tenantId: context.tenantId },
        usage: {
          inputTokens: body.input_tokens,
          outputTokens: body.output_tokens,
          cacheReadTokens: body.cache_tokens,
          totalTokens: total,
          ...(body.model ? { model: body.model } : {}),
        },
        requests: body.requests,
        context: {
          sessionId: claims.sid,
          toolName: context.toolName ?? 'remote',
          hostName: context.hostName ?? 'localhost',
        },
      });
    }
    await writeAudit(deps, req, {
      action: 'REMOTE_USAGE_REPORT',
      resourceType: 'agent_session',
      resourceId: claims.sid,
      userId: claims.uid,
      tenantId: context.tenantId,
      username: context.username,
      details: { report_id: body.report_id, counted, total_tokens: total, requests: body.requests },
    });
    res.status(201).json({ success: true, duplicate: false, counted });
  });

  return r;
}
