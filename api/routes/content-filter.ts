// The content filter's API (spec document 2, "Governance and content"; issue 11 item 1). Request and
// response bodies of the rule updates are not shown by the spec, so chosen here.
//
//   GET    /api/filter-rules (admin)            system admin: every rule; tenant admin: global + own
//   POST   /api/filter-rules (admin)            {pattern, type keyword|regex (keyword), severity
//                                               low|medium|high (medium), action warn|block|review
//                                               (warn), description, is_enabled (true), tenant_id}
//   PUT    /api/filter-rules/:rule_id (admin)   partial update of the same fields
//   DELETE /api/filter-rules/:rule_id (admin)
//   POST   /api/content/check                   {content} (any authenticated user; at most 100 KB,
//                                               else 413) -> {verdict, matches, filter_enabled}
//   GET    /api/content/filter/stats (admin)    tenant-scoped: rules by type/action/enabled, flagged
//                                               uploads by verdict, in-process counters since start
//
// Who writes which rule: a platform admin writes global rules (tenant_id null, the default) and any
// tenant's; a tenant admin writes its own tenant's only (tenant_id absent or its own; global rules
// are read-only to it: 403). A rule outside the caller's scope is a 404. Regex patterns are compiled
// by RE2 before they are stored (domain/content-filter/rules.ts): an invalid pattern is a 400 naming
// the problem. Every write is audited and invalidates the compiled-rule caches (services/content-filter.ts).
import { Router } from 'express';
import { z } from 'zod';
import { contentFilterRepository, type FilterRuleRow } from '../../db/repositories/content-filter.ts';
import { rawScopeCondition } from '../../db/tenant-scope-sql.ts';
import { isSystemAdmin } from '../../domain/access.ts';
import {
  FILTER_ACTIONS,
  FILTER_RULE_TYPES,
  FILTER_SEVERITIES,
  MAX_CONTENT_BYTES,
  patternProblem,
} from '../../domain/content-filter/rules.ts';
import { BadRequestError, ForbiddenError, NotFoundError, PayloadTooLargeError } from '../../domain/errors.ts';
import { readScope, TENANT_KEY_ERRORS } from '../../domain/tenant-scope.ts';
import { writeAudit } from '../../services/audit.ts';
import { contentFilterFor } from '../../services/content-filter.ts';
import type { AppDeps } from '../../services/deps.ts';
import { authenticate, requireAdmin } from '../middleware/auth.ts';
import { endpoint } from '../openapi/endpoint.ts';

const MAX_ID = 2_147_483_647;
const tenantIdField = z.number().int().min(1).max(MAX_ID).nullable();
const createBody = z.object({
  pattern: z.string().min(1),
  type: z.enum(FILTER_RULE_TYPES).default('keyword'),
  severity: z.enum(FILTER_SEVERITIES).default('medium'),
  action: z.enum(FILTER_ACTIONS).default('warn'),
  description: z.string().max(2_000).nullable().optional(),
  is_enabled: z.boolean().default(true),
  tenant_id: tenantIdField.optional(),
});
const updateBody = z.object({
  pattern: z.string().min(1).optional(),
  type: z.enum(FILTER_RULE_TYPES).optional(),
  severity: z.enum(FILTER_SEVERITIES).optional(),
  action: z.enum(FILTER_ACTIONS).optional(),
  description: z.string().max(2_000).nullable().optional(),
  is_enabled: z.boolean().optional(),
  tenant_id: tenantIdField.optional(),
});
const ruleParams = z.object({ rule_id: z.coerce.number().int().positive().max(MAX_ID) });
const checkBody = z.object({ content: z.string() });

const ruleView = (r: FilterRuleRow) => ({
  id: r.id,
  pattern: r.pattern,
  type: r.type,
  severity: r.severity,
  action: r.action,
  description: r.description,
  is_enabled: r.isEnabled,
  tenant_id: r.tenantId,
  created_at: r.createdAt,
  updated_at: r.updatedAt,
});

type Caller = { role: string; tenantId: number | null };

/** The tenant a rule write lands on: system admins choose (global by default), tenant admins get their own. */
function targetTenant(
  user: Caller,
  requested: number | null | undefined,
  current?: number | null,
): number | null {
  if (isSystemAdmin(user)) return requested !== undefined ? requested : (current ?? null);
  if (user.tenantId == null) throw new ForbiddenError(TENANT_KEY_ERRORS.adminWithoutTenant);
  if (requested !== undefined && requested !== user.tenantId)
    throw new ForbiddenError(TENANT_KEY_ERRORS.crossTenant);
  return user.tenantId;
}

/** The rule when the caller may change it; 404 outside its scope, 403 for a global rule of a tenant admin. */
function writable(user: Caller, rule: FilterRuleRow | undefined): FilterRuleRow {
  if (rule === undefined) throw new NotFoundError('Filter rule not found');
  if (isSystemAdmin(user)) return rule;
  if (rule.tenantId === null) throw new ForbiddenError('Only a system administrator can change global rules');
  if (user.tenantId == null || rule.tenantId !== user.tenantId)
    throw new NotFoundError('Filter rule not found');
  return rule;
}

function checkPattern(type: 'keyword' | 'regex', pattern: string) {
  const problem = patternProblem(type, pattern);
  if (problem !== null) throw new BadRequestError(`pattern: ${problem}`);
}

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const ruleAnswer = z.looseObject({
  id: z.number().int(),
  pattern: z.string(),
  type: z.string(),
  severity: z.string(),
  action: z.string(),
  description: z.string().nullable(),
  is_enabled: z.boolean(),
  tenant_id: z.number().int().nullable(),
  created_at: z.string().nullable(),
  updated_at: z.string().nullable(),
});
const tags = ['content-filter'];
const getFilterRules = endpoint({
  tags,
  responses: { 200: z.looseObject({ rules: z.array(ruleAnswer), total: z.number().int() }) },
});
const postFilterRules = endpoint({ tags, body: createBody, responses: { 201: ruleAnswer } });
const putFilterRulesId = endpoint({
  tags,
  params: ruleParams,
  body: updateBody,
  responses: { 200: ruleAnswer },
});
const deleteFilterRulesId = endpoint({
  tags,
  params: ruleParams,
  responses: { 200: z.looseObject({ deleted: z.literal(true), id: z.number().int() }) },
});
const postContentCheck = endpoint({
  tags,
  body: checkBody,
  responses: {
    200: z.looseObject({ verdict: z.string(), matches: z.array(z.unknown()), filter_enabled: z.boolean() }),
  },
  errors: [413],
});
const getContentFilterStats = endpoint({
  tags,
  responses: {
    200: z.looseObject({
      // 'all' for a system admin, else the caller's tenant.
      scope: z.union([z.literal('all'), z.looseObject({ tenant_id: z.number().int() })]),
      rules: z.looseObject({ total: z.number().int(), enabled: z.number().int() }),
      flagged_messages: z.looseObject({}),
      since_start: z.looseObject({}),
    }),
  },
});

export function contentFilterRouter(deps: AppDeps) {
  const router = Router();
  const repo = contentFilterRepository(deps.database.sql);
  const filter = contentFilterFor(deps);
  const admin = [authenticate(deps), requireAdmin];

  router.get('/api/filter-rules', getFilterRules, ...admin, async (req, res) => {
    const scope = readScope(req.auth.user);
    if (scope.kind === 'none') return res.json({ rules: [], total: 0 });
    const rules = await repo.list(scope.kind === 'all' ? { kind: 'all' } : scope);
    res.json({ rules: rules.map(ruleView), total: rules.length });
  });

  router.post('/api/filter-rules', postFilterRules, ...admin, async (req, res) => {
    const body = postFilterRules.body(req);
    checkPattern(body.type, body.pattern);
    const tenantId = targetTenant(req.auth.user, body.tenant_id);
    const rule = await repo.create(
      {
        pattern: body.pattern,
        type: body.type,
        severity: body.severity,
        action: body.action,
        description: body.description ?? null,
        isEnabled: body.is_enabled,
        tenantId,
      },
      deps.now(),
    );
    filter.invalidate();
    await writeAudit(deps, req, {
      action: 'CONTENT_FILTER_RULE_CREATED',
      resourceType: 'content_filter_rule',
      resourceId: String(rule.id),
      tenantId,
      details: { type: rule.type, action: rule.action, severity: rule.severity },
    });
    res.status(201).json(ruleView(rule));
  });

  router.put('/api/filter-rules/:rule_id', putFilterRulesId, ...admin, async (req, res) => {
    const { rule_id } = putFilterRulesId.params(req);
    const body = putFilterRulesId.body(req);
    const rule = writable(req.auth.user, await repo.get(rule_id));
    const next = {
      pattern: body.pattern ?? rule.pattern,
      type: body.type ?? rule.type,
      severity: body.severity ?? rule.severity,
      action: body.action ?? rule.action,
      description: body.description !== undefined ? body.description : rule.description,
      isEnabled: body.is_enabled ?? rule.isEnabled,
      tenantId: targetTenant(req.auth.user, body.tenant_id, rule.tenantId),
    };
    checkPattern(next.type, next.pattern);
    const updated = await repo.update(rule_id, next, deps.now());
    filter.invalidate();
    if (updated === undefined) throw new NotFoundError('Filter rule not found');
    await writeAudit(deps, req, {
      action: 'CONTENT_FILTER_RULE_UPDATED',
      resourceType: 'content_filter_rule',
      resourceId: String(rule_id),
      tenantId: next.tenantId,
      details: { fields: Object.keys(body) },
    });
    res.json(ruleView(updated));
  });

  router.delete('/api/filter-rules/:rule_id', deleteFilterRulesId, ...admin, async (req, res) => {
    const { rule_id } = deleteFilterRulesId.params(req);
    const rule = writable(req.auth.user, await repo.get(rule_id));
    if (!(await repo.remove(rule_id))) throw new NotFoundError('Filter rule not found');
    filter.invalidate();
    await writeAudit(deps, req, {
      action: 'CONTENT_FILTER_RULE_DELETED',
      resourceType: 'content_filter_rule',
      resourceId: String(rule_id),
      tenantId: rule.tenantId,
    });
    res.json({ deleted: true, id: rule_id });
  });

  router.post('/api/content/check', postContentCheck, authenticate(deps), async (req, res) => {
    const { content } = postContentCheck.body(req);
    if (Buffer.byteLength(content, 'utf8') > MAX_CONTENT_BYTES)
      throw new PayloadTooLargeError(`content: longer than ${MAX_CONTENT_BYTES} bytes`);
    const result = await filter.check(req.auth.user.tenantId, content);
    res.json({ verdict: result.verdict, matches: result.matches, filter_enabled: result.filterEnabled });
  });

  router.get('/api/content/filter/stats', getContentFilterStats, ...admin, async (req, res) => {
    const scope = readScope(req.auth.user);
    if (scope.kind === 'none') throw new ForbiddenError(TENANT_KEY_ERRORS.adminWithoutTenant);
    const rules = await repo.list(scope.kind === 'all' ? { kind: 'all' } : scope);
    const by = (key: (r: FilterRuleRow) => string) => {
      const out: Record<string, number> = {};
      for (const r of rules) out[key(r)] = (out[key(r)] ?? 0) + 1;
      return out;
    };
    const condition = rawScopeCondition(scope, 'tenant_id');
    const flagged = await repo.flaggedCounts(condition === false ? undefined : condition);
    res.json({
      scope: scope.kind === 'all' ? 'all' : { tenant_id: scope.tenantId },
      rules: {
        total: rules.length,
        enabled: rules.filter((r) => r.isEnabled).length,
        disabled: rules.filter((r) => !r.isEnabled).length,
        by_type: by((r) => r.type),
        by_action: by((r) => r.action),
        by_severity: by((r) => r.severity),
      },
      flagged_messages: {
        blocked: flagged.blocked ?? 0,
        review: flagged.review ?? 0,
        warn: flagged.warn ?? 0,
      },
      since_start: filter.countersOf(scope.kind === 'all' ? null : scope.tenantId),
    });
  });

  return router;
}
