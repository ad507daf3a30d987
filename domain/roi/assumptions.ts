// The query of the ROI and optimization endpoints (spec document 2, "Return on investment", and the
// "Limits" row "ROI currency label: 1 to 8 characters"). Pure. The assumption parameters are positive
// decimal numbers written plainly (`50`, `1.5`; no sign, exponent, `Infinity` or repeated parameter),
// the currency is a 1-8 character label that is never converted (rule 4). A malformed value is a 400
// naming the parameter (domain/validation.ts parseInput); defaults apply when a parameter is absent.
import { z } from 'zod';
import { daySchema } from '../analytics/days.ts';

export interface Assumptions {
  /** Labor cost of one hour of work, in `currency`. */
  hourly_labor_cost: number;
  /** How much of the saved time turns into value (1 = all of it). */
  productivity_multiplier: number;
  /** Minutes of work one assistant response saves. */
  avg_time_saved_per_request: number;
  /** A label of the labor cost only. */
  currency: string;
}

export const DEFAULT_ASSUMPTIONS: Readonly<Assumptions> = {
  hourly_labor_cost: 50,
  productivity_multiplier: 1,
  avg_time_saved_per_request: 5,
  currency: 'USD',
};

/** The window the endpoints read when no dates are given: the 30 days ending today. */
export const DEFAULT_WINDOW_DAYS = 30;
const MAX_ASSUMPTION = 1_000_000_000;

/** Digits with at most one decimal part; linear (no nested quantifiers) and length-capped first. */
const DECIMAL = /^[0-9]+(\.[0-9]+)?$/;
const positive = z
  .string()
  .max(32, 'must be a positive number')
  .refine((v) => DECIMAL.test(v), 'must be a positive number')
  .transform(Number)
  .refine((v) => v > 0 && v <= MAX_ASSUMPTION, `must be a positive number up to ${MAX_ASSUMPTION}`);

const currency = z.string().refine((v) => {
  const n = [...v].length;
  return n >= 1 && n <= 8 && v.trim() === v;
}, 'must be 1 to 8 characters');

const userId = z
  .string()
  .max(10, 'must be a positive integer')
  .refine(
    (v) => /^[0-9]+$/.test(v) && Number(v) >= 1 && Number(v) <= 2_147_483_647,
    'must be a positive integer',
  )
  .transform(Number);

export const roiQuerySchema = z.object({
  start_date: daySchema.optional(),
  end_date: daySchema.optional(),
  user_id: userId.optional(),
  tool_name: z.string().min(1).max(100).optional(),
  hourly_labor_cost: positive.default(DEFAULT_ASSUMPTIONS.hourly_labor_cost),
  productivity_multiplier: positive.default(DEFAULT_ASSUMPTIONS.productivity_multiplier),
  avg_time_saved_per_request: positive.default(DEFAULT_ASSUMPTIONS.avg_time_saved_per_request),
  currency: currency.default(DEFAULT_ASSUMPTIONS.currency),
});
export type RoiQuery = z.infer<typeof roiQuerySchema>;

export const assumptionsOf = (q: RoiQuery): Assumptions => ({
  hourly_labor_cost: q.hourly_labor_cost,
  productivity_multiplier: q.productivity_multiplier,
  avg_time_saved_per_request: q.avg_time_saved_per_request,
  currency: q.currency,
});
