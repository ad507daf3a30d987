// Response schemas of the quota reads (quota.ts, admin-quota.ts) for /api/openapi.json, written from
// periodView / statusView / allStatusView / alertView in quota.ts. A limit of null means unlimited
// (and then nothing remains to count down).
import { z } from 'zod';
import { count, day, nullableInt } from '../openapi/shapes.ts';

export const periodAnswer = z.looseObject({
  tokens_used: count,
  requests_used: count,
  requests_in_flight: count,
  token_limit: nullableInt,
  request_limit: nullableInt,
  tokens_remaining: nullableInt,
  requests_remaining: nullableInt,
});
const standing = { within_quota: z.boolean(), exceeded: z.array(z.string()) };
export const statusAnswer = z.looseObject({
  period: z.enum(['daily', 'monthly']),
  ...standing,
  user: periodAnswer,
  tenant: periodAnswer.nullable(),
});
export const userQuotaAnswer = z.looseObject({
  user_id: count,
  username: z.string(),
  tenant_id: nullableInt,
  ...standing,
  daily: periodAnswer,
  monthly: periodAnswer,
});
export const allStatusAnswer = z.looseObject({
  date: day,
  month: day,
  users: z.array(userQuotaAnswer),
  tenants: z.array(
    z.looseObject({
      tenant_id: count,
      name: z.string(),
      ...standing,
      daily: periodAnswer,
      monthly: periodAnswer,
    }),
  ),
});
export const quotaAlertAnswer = z.looseObject({
  id: count,
  user_id: nullableInt,
  tenant_id: nullableInt,
  alert_type: z.string().nullable(),
  quota_type: z.string().nullable(),
  period: z.string().nullable(),
  threshold: z.number().nullable(),
  current_usage: z.number(),
  quota_limit: z.number(),
  percentage: z.number().nullable(),
  acknowledged: z.boolean(),
  acknowledged_at: z.string().nullable(),
  created_at: z.string(),
});
