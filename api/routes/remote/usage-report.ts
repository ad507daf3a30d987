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
// Limits, because the usage is self-declared and counts against the tenant's quota:
//   - every count is a non-negative integer; each token field (and total_tokens) at most
//     settings.remote.usage_report_max_tokens (10M), requests at most usage_report_max_requests (10k):
//     400 naming the field otherwise;
//   - only for a session whose CLI really ran on its machine: a remote session, bound to the current
//     registration of its machine, whose start command the agent has claimed, and not ended (the proxy
//     token of an ended session is refused anyway): 403 otherwise;
//   - at most settings.remote.usage_reports_per_minute reports per session in any 60 s: 429 with
//     Retry-After. The count is the session's rows in usage_reports, so it holds across instances.
//
// Every report is stored in usage_reports (report_id stored as `<session_id>:<report_id>`, so one
// session cannot shadow another's ids). The proxy is the accounting of record for every model call
// that passes through it, so a report counts towards quotas only when it says the usage did NOT pass
// through the proxy (`via_proxy: false`); otherwise it is kept for reconciliation only and a call is
// never counted twice.
import { Router } from 'express';
import { z } from 'zod';
import { usageReportsRepository } from '../../../db/repositories/usage-reports.ts';
import {
  type AppError,
  BadRequestError,
  ForbiddenError,
  TooManyRequestsError,
  UnauthorizedError,
} from '../../../domain/errors.ts';
import { proxyTokenService } from '../../../services/proxy-tokens.ts';
import { quotaServiceFor } from '../../../services/quota.ts';
import { writeAudit } from '../../audit.ts';
import type { AppDeps } from '../../deps.ts';
import { endpoint } from '../../openapi/endpoint.ts';
import { proxyTokenOf } from './llm-proxy.ts';

const RATE_WINDOW_MS = 60_000;

function reportSchema(limits: { maxTokens: number; maxRequests: number }) {
  const tokens = z.number().int('must be an integer').min(0, 'must not be negative').max(limits.maxTokens);
  return z.object({
    report_id: z.string().trim().min(1).max(90),
    session_id: z.string().max(64).optional(),
    input_tokens: tokens.default(0),
    output_tokens: tokens.default(0),
    cache_tokens: tokens.default(0),
    total_tokens: tokens.optional(),
    requests: z
      .number()
      .int('must be an integer')
      .min(0, 'must not be negative')
      .max(limits.maxRequests)
      .default(1),
    model: z.string().max(100).optional(),
    machine_id: z.string().max(64).optional(),
    via_proxy: z.boolean().default(true),
  });
}

export function usageReportRouter(deps: AppDeps): Router {
  const r = Router();
  const tokens = proxyTokenService(deps);
  const reports = usageReportsRepository(deps.database);
  const quota = quotaServiceFor(deps);
  const limits = deps.settings.remote;
  const reportBody = reportSchema({
    maxTokens: limits.usage_report_max_tokens,
    maxRequests: limits.usage_report_max_requests,
  });

  // The route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts): the limits
  // come from settings, so it is made here.
  const usageReportAnswer = z.looseObject({
    success: z.literal(true),
    duplicate: z.boolean(),
    counted: z.boolean(),
  });
  const postRemoteUsageReport = endpoint({
    tags: ['remote'],
    auth: ['proxyToken'],
    body: reportBody,
    responses: { 200: usageReportAnswer, 201: usageReportAnswer },
  });

  r.post('/api/remote/usage-report', postRemoteUsageReport, async (req, res) => {
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
    const body = postRemoteUsageReport.body(req);
    const refuse = async (reason: string, error: AppError): Promise<never> => {
      await writeAudit(deps, req, {
        action: 'REMOTE_USAGE_REPORT',
        resourceType: 'agent_session',
        resourceId: claims.sid,
        success: false,
        userId: claims.uid,
        tenantId: context.tenantId,
        username: context.username,
        details: { reason, report_id: body.report_id },
      });
      throw error;
    };
    if (body.session_id !== undefined && body.session_id !== claims.sid)
      await refuse('other_session', new ForbiddenError("The report names another session than the token's"));
    const total = body.total_tokens ?? body.input_tokens + body.output_tokens;
    if (total > limits.usage_report_max_tokens)
      throw new BadRequestError(
        `total_tokens: must be at most ${limits.usage_report_max_tokens} in one report (input_tokens + output_tokens)`,
      );
    const session = await reports.reportingSession(claims.sid);
    if (session?.workspaceType !== 'remote' || !session.machineId || !session.machineCurrent)
      await refuse('not_remote', new ForbiddenError('Usage reports are accepted only for remote sessions'));
    if (body.machine_id !== undefined && body.machine_id !== session!.machineId)
      await refuse(
        'other_machine',
        new ForbiddenError("The report names another machine than the session's"),
      );
    if (!session!.started)
      await refuse(
        'not_started',
        new ForbiddenError('The session has not been started on its machine; there is no usage to report'),
      );
    const now = deps.now();
    const rowId = await reports.insertOnce({
      reportId: `${claims.sid}:${body.report_id}`,
      sessionId: claims.sid,
      machineId: session!.machineId,
      userId: claims.uid,
      inputTokens: body.input_tokens,
      outputTokens: body.output_tokens,
      model: body.model ?? null,
      receivedAt: now,
    });
    if (rowId === undefined) {
      res.json({ success: true, duplicate: true, counted: false });
      return;
    }
    // Inserted first, then counted up to our own row: concurrent reports cannot all slip under the limit.
    const recent = await reports.recentCount(claims.sid, new Date(now.getTime() - RATE_WINDOW_MS), rowId);
    if (recent.count > limits.usage_reports_per_minute) {
      await reports.delete(rowId);
      const freesAt = (recent.oldest?.getTime() ?? now.getTime()) + RATE_WINDOW_MS;
      const retryAfter = Math.min(60, Math.max(1, Math.ceil((freesAt - now.getTime()) / 1000)));
      res.setHeader('retry-after', String(retryAfter));
      await refuse(
        'rate_limited',
        new TooManyRequestsError(
          `At most ${limits.usage_reports_per_minute} usage reports per session per minute; retry later`,
          { retry_after: retryAfter },
        ),
      );
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
