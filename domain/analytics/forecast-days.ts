// The `days` parameter of the forecast (spec document 2, "Analysis and analytics" and "Limits"): an
// integer from 1 to 90, default 7. Anything else is a 400 with exactly the body the spec names:
// {error: 'invalid_parameter', message, parameter: 'days', received, valid_range: '1-90'}.
import { BadRequestError } from '../errors.ts';

export const FORECAST_DAYS = { min: 1, max: 90, default: 7 } as const;

export function parseForecastDays(raw: unknown): number {
  if (raw === undefined) return FORECAST_DAYS.default;
  if (typeof raw === 'string' && /^[0-9]{1,3}$/.test(raw)) {
    const n = Number(raw);
    if (n >= FORECAST_DAYS.min && n <= FORECAST_DAYS.max) return n;
  }
  throw new BadRequestError('invalid_parameter', {
    message: `days must be an integer from ${FORECAST_DAYS.min} to ${FORECAST_DAYS.max}`,
    parameter: 'days',
    received: raw,
    valid_range: `${FORECAST_DAYS.min}-${FORECAST_DAYS.max}`,
  });
}
