// Holt's linear method (double exponential smoothing) with a prediction interval, pure. Used by the
// token forecast (GET /api/analytics/forecast). Notation of Hyndman & Athanasopoulos, "Forecasting:
// Principles and Practice", 3rd ed., sections 8.2 and 8.7:
//
//   level    l_t = alpha * y_t + (1 - alpha) * (l_{t-1} + b_{t-1})
//   trend    b_t = beta * (l_t - l_{t-1}) + (1 - beta) * b_{t-1}
//   forecast y_{T+h|T} = l_T + h * b_T
//   variance sigma_h^2 = sigma^2 * (1 + sum_{j=1}^{h-1} alpha^2 * (1 + j * beta)^2)
//
// Start: l_0 = y_0, b_0 = y_1 - y_0 (so the first one-step error is 0 by construction). sigma^2 is the
// sum of squared one-step errors over n - 2 (the n - 1 errors less the first, which carries no
// information). alpha and beta are chosen by a grid search (0.1 .. 0.9, step 0.1) minimising that sum;
// ties keep the smaller alpha, then the smaller beta, so the choice is deterministic.

export interface HoltFit {
  alpha: number;
  beta: number;
  level: number;
  trend: number;
  /** Sum of squared one-step-ahead errors. */
  sse: number;
  /** Residual variance sigma^2 (0 with fewer than 3 observations). */
  sigma2: number;
}

export interface ForecastPoint {
  /** 1-based steps ahead. */
  h: number;
  value: number;
  lower: number;
  upper: number;
}

/** z quantiles of the standard normal for the interval levels offered. */
export const NORMAL_QUANTILE = { 0.8: 1.281552, 0.95: 1.959964 } as const;
export type IntervalLevel = keyof typeof NORMAL_QUANTILE;

const GRID = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];

/** Runs the recursions with fixed parameters. Needs at least 2 observations. */
export function holtFit(series: readonly number[], alpha: number, beta: number): HoltFit {
  if (series.length < 2) throw new RangeError("Holt's method needs at least 2 observations");
  let level = series[0]!;
  let trend = series[1]! - series[0]!;
  let sse = 0;
  for (let t = 1; t < series.length; t++) {
    const y = series[t]!;
    const e = y - (level + trend);
    sse += e * e;
    const prev = level;
    level = alpha * y + (1 - alpha) * (level + trend);
    trend = beta * (level - prev) + (1 - beta) * trend;
  }
  const sigma2 = series.length > 2 ? sse / (series.length - 2) : 0;
  return { alpha, beta, level, trend, sse, sigma2 };
}

/** The best (alpha, beta) of the grid by one-step squared error. */
export function holtFitBest(series: readonly number[]): HoltFit {
  let best: HoltFit | undefined;
  for (const a of GRID)
    for (const b of GRID) {
      const f = holtFit(series, a, b);
      if (!best || f.sse < best.sse - 1e-9) best = f;
    }
  return best!;
}

/** Point forecasts and two-sided prediction intervals for h = 1..horizon. */
export function holtForecast(fit: HoltFit, horizon: number, level: IntervalLevel = 0.95): ForecastPoint[] {
  const z = NORMAL_QUANTILE[level];
  const out: ForecastPoint[] = [];
  let sum = 1;
  for (let h = 1; h <= horizon; h++) {
    if (h > 1) sum += fit.alpha * fit.alpha * (1 + (h - 1) * fit.beta) ** 2;
    const value = fit.level + h * fit.trend;
    const half = z * Math.sqrt(fit.sigma2 * sum);
    out.push({ h, value, lower: value - half, upper: value + half });
  }
  return out;
}
