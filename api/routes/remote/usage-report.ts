// POST /api/remote/usage-report (spec document 1, "Agent install and communication"; payload not
// shown by the spec, so chosen here):
//
//   auth: the agent's own credentials, as for /api/remote/agent/message: Authorization: Bearer <agent
//         token> and X-Machine-Id (api/routes/remote/agent-auth.ts); 401 otherwise. A session's proxy
//         token is NOT accepted: the CLI (and whoever holds its shell) has it, and could otherwise
//         charge any amount to the tenant (issue 25 item 3).
//   body: {report_id: string (1-90 chars, unique per session), session_id, input_tokens, output_tokens,
//          cache_tokens?, total_tokens? (default input + output), requests? (default 1), model?,
//          machine_id?, via_proxy? (default true)}
//   201 {success: true, duplicate: false, counted, counted_tokens, counted_requests, refused_tokens,
//        refused_requests, refused_reason?}   first time this report_id is seen for the session
//   200 {success: true, duplicate: true, counted: false}   a repeat: nothing is recorded again
//
// Limits, because the usage is self-declared:
//   - every count is a non-negative integer; each token field (and total_tokens) at most
//     settings.remote.usage_report_max_tokens (200k), requests at most usage_report_max_requests
//     (100): 400 naming the field otherwise;
//   - only for a session on the calling machine: a remote session bound to the current registration
//     of this machine (another machine's agent token -> 403), whose start command the agent has
//     claimed, and not ended: 403 otherwise;
//   - at most settings.remote.usage_reports_per_minute reports per session in any 60 s: 429 with
//     Retry-After. The count is the session's rows in usage_reports, so it holds across instances;
//   - what counts is charged to the session's user (and tenant) within what is left of their quotas,
//     never beyond (domain/usage-report.ts): the rest is refused, and the answer says how much.
//
// Every report is stored in usage_reports (report_id stored as `<session_id>:<report_id>`, so one
// session cannot shadow another's ids). The proxy is the accounting of record for every model call
// that passes through it, so a report counts towards quotas only when it says the usage did NOT pass
// through the proxy (`via_proxy: false`); otherwise it is kept for reconciliation only and a call is
// never counted twice.
import { Router } from 'express';
import { z } from 'zod';
import { remoteMachinesRepository } from '../../../db/repositories/remote-machines.ts';
import { usageReportsRepository } from '../../../db/repositories/usage-reports.ts';
import {
  type AppError,
  BadRequestError,
  ForbiddenError,
  TooManyRequestsError,
  UnauthorizedError,
} from '../../../domain/errors.ts';
import { clipToRoom, roomLeft } from '../../../domain/usage-report.ts';
import { writeAudit } from '../../../services/audit.ts';
import type { AppDeps } from '../../../services/deps.ts';
import { type QuotaService, quotaServiceFor } from '../../../services/quota.ts';
import { endpoint } from '../../openapi/endpoint.ts';
import { authenticateAgent } from './agent-auth.ts';

const RATE_WINDOW_MS = 60_000;
const ENDED = new Set(['stopped', 'completed']);

function reportSchema(limits: { maxTokens: number; maxRequests: number }) {
  const tokens = z.number().int('must be an integer').min(0, 'must not be negative').max(limits.maxTokens);
  return z.object({
    report_id: z.string().trim().min(1).max(90),
    session_id: z.string().min(1).max(64),
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

type Report = z.infer<ReturnType<typeof reportSchema>>;

/**
 * Charges a report to the session's user within the room left of every quota: checks the standing,
 * clips, then reserves exactly the clipped amount (a conditional write: a concurrent spender that took
 * the room first makes it count nothing, never more) and settles it.
 */
async function chargeWithinQuota(
  quota: QuotaService,
  subject: { userId: number; tenantId: number },
  report: Report,
  total: number,
  context: { sessionId: string; toolName: string; hostName: string },
) {
  const status = await quota.checkQuota(subject, { tokens: 0, requests: 0 });
  const room = roomLeft([status.user, ...(status.tenant ? [status.tenant] : [])]);
  const counted = clipToRoom({ tokens: total, requests: report.requests }, room);
  const none = { tokens: 0, requests: 0 };
  if (counted.tokens === 0 && counted.requests === 0) return none;
  const reserved = await quota.reserve(subject, counted);
  if (!reserved.ok) return none;
  const whole = counted.tokens === total;
  const input = whole ? report.input_tokens : Math.min(report.input_tokens, counted.tokens);
  await quota.settle(
    reserved.reservation,
    {
      counted: true,
      usage: {
        inputTokens: input,
        outputTokens: whole ? report.output_tokens : counted.tokens - input,
        cacheReadTokens: whole ? report.cache_tokens : 0,
        cacheWriteTokens: 0,
        totalTokens: counted.tokens,
        ...(report.model ? { model: report.model } : {}),
      },
    },
    context,
  );
  return counted;
}

export function usageReportRouter(deps: AppDeps): Router {
  const r = Router();
  const machines = remoteMachinesRepository(deps.database);
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
    counted_tokens: z.number().int().optional(),
    counted_requests: z.number().int().optional(),
    refused_tokens: z.number().int().optional(),
    refused_requests: z.number().int().optional(),
    refused_reason: z.string().optional(),
  });
  const postRemoteUsageReport = endpoint({
    tags: ['remote'],
    auth: ['agentToken'],
    body: reportBody,
    responses: { 200: usageReportAnswer, 201: usageReportAnswer },
  });

  r.post('/api/remote/usage-report', postRemoteUsageReport, async (req, res) => {
    let machine: Awaited<ReturnType<typeof authenticateAgent>>;
    try {
      machine = await authenticateAgent(machines, req);
    } catch (err) {
      if (!(err instanceof UnauthorizedError)) throw err;
      await writeAudit(deps, req, {
        action: 'REMOTE_USAGE_REPORT',
        resourceType: 'agent_session',
        success: false,
        userId: null,
        tenantId: null,
        username: null,
        details: { reason: 'agent_token_rejected' },
      });
      throw err;
    }
    const body = postRemoteUsageReport.body(req);
    const sid = body.session_id;
    const refuse = async (reason: string, error: AppError): Promise<never> => {
      await writeAudit(deps, req, {
        action: 'REMOTE_USAGE_REPORT',
        resourceType: 'agent_session',
        resourceId: sid,
        success: false,
        userId: null,
        tenantId: machine.tenantId,
        username: `agent:${machine.machineId}`,
        details: { reason, report_id: body.report_id, machine_id: machine.machineId },
        rateLimitKey: `${machine.machineId}:${reason}`,
      });
      throw error;
    };
    if (body.machine_id !== undefined && body.machine_id !== machine.machineId)
      await refuse('other_machine', new ForbiddenError("The report names another machine than the agent's"));
    const total = body.total_tokens ?? body.input_tokens + body.output_tokens;
    if (total > limits.usage_report_max_tokens)
      throw new BadRequestError(
        `total_tokens: must be at most ${limits.usage_report_max_tokens} in one report (input_tokens + output_tokens)`,
      );
    const found = await reports.reportingSession(sid);
    if (found?.workspaceType !== 'remote' || !found.machineId)
      await refuse('not_remote', new ForbiddenError('Usage reports are accepted only for remote sessions'));
    const session = found!;
    if (session.machineId !== machine.machineId || !session.machineCurrent)
      await refuse('other_machine', new ForbiddenError('The session does not run on this machine'));
    if (!session.started)
      await refuse(
        'not_started',
        new ForbiddenError('The session has not been started on its machine; there is no usage to report'),
      );
    if (ENDED.has(session.status) || session.userId === null)
      await refuse('ended', new ForbiddenError('The session has ended'));
    const userId = session.userId!;
    const now = deps.now();
    const rowId = await reports.insertOnce({
      reportId: `${sid}:${body.report_id}`,
      sessionId: sid,
      machineId: machine.machineId,
      userId,
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
    const recent = await reports.recentCount(sid, new Date(now.getTime() - RATE_WINDOW_MS), rowId);
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
    const asked = body.via_proxy ? { tokens: 0, requests: 0 } : { tokens: total, requests: body.requests };
    const counted = body.via_proxy
      ? asked
      : await chargeWithinQuota(quota, { userId, tenantId: session.tenantId }, body, total, {
          sessionId: sid,
          toolName: session.toolName,
          hostName: session.hostName,
        });
    const refused = { tokens: asked.tokens - counted.tokens, requests: asked.requests - counted.requests };
    const figures = {
      counted_tokens: counted.tokens,
      counted_requests: counted.requests,
      refused_tokens: refused.tokens,
      refused_requests: refused.requests,
      ...(refused.tokens || refused.requests ? { refused_reason: 'quota' } : {}),
    };
    await writeAudit(deps, req, {
      action: 'REMOTE_USAGE_REPORT',
      resourceType: 'agent_session',
      resourceId: sid,
      userId,
      tenantId: session.tenantId,
      username: `agent:${machine.machineId}`,
      details: { report_id: body.report_id, via_proxy: body.via_proxy, total_tokens: total, ...figures },
    });
    res.status(201).json({
      success: true,
      duplicate: false,
      counted: counted.tokens > 0 || counted.requests > 0,
      ...figures,
    });
  });

  return r;
}
