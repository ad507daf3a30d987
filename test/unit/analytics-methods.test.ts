// The documented methods of the analytics endpoints on known series with exact expected values:
// median, MAD and the modified z-score (with its MeanAD fallback), type-7 quantiles, Holt's linear
// recursions, grid choice and prediction interval, the anomaly rules and their anomaly_status key,
// user segmentation, the forecast `days` rule (exact 400 body) and the day parameters.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import {
  affectedUsersHash,
  detectAnomalies,
  groupAnomalies,
  severityOf,
  type UserDay,
} from '../../domain/analytics/anomalies.ts';
import { addDays, daysOf, isDay, resolveWindow } from '../../domain/analytics/days.ts';
import { dailySeries, linearSlope, userTotals } from '../../domain/analytics/figures.ts';
import { parseForecastDays } from '../../domain/analytics/forecast-days.ts';
import { holtFit, holtFitBest, holtForecast } from '../../domain/analytics/holt.ts';
import { recommend, segmentUsers } from '../../domain/analytics/insights.ts';
import { mad, median, quantile, robustZScores } from '../../domain/analytics/robust-stats.ts';
import { BadRequestError } from '../../domain/errors.ts';

const close = (a: number, b: number, eps = 1e-9) => assert.ok(Math.abs(a - b) < eps, `${a} != ${b}`);

describe('robust statistics', () => {
  test('median of odd and even lists, unsorted', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.throws(() => median([]), RangeError);
  });

  test('MAD and modified z-scores of a series with one outlier', () => {
    const xs = [10, 12, 11, 13, 12, 100];
    // median 12; deviations 2,0,1,1,0,88 -> median 1
    assert.equal(median(xs), 12);
    assert.equal(mad(xs), 1);
    const s = robustZScores(xs);
    assert.equal(s.scale, 'mad');
    close(s.scores[5]!, 0.6745 * 88); // 59.356
    close(s.scores[0]!, -0.6745 * 2);
  });

  test('MAD of 0 falls back to the mean absolute deviation; no spread gives 0', () => {
    const s = robustZScores([5, 5, 5, 5, 5, 35]);
    assert.equal(s.scale, 'mean_ad');
    // MeanAD = 30 / 6 = 5; z = 30 / (1.253314 * 5)
    close(s.scores[5]!, 30 / (1.253314 * 5));
    assert.deepEqual(robustZScores([7, 7, 7]).scores, [0, 0, 0]);
  });

  test('type-7 quantiles', () => {
    assert.equal(quantile([1, 2, 3, 4], 0.25), 1.75);
    assert.equal(quantile([1, 2, 3, 4], 0.75), 3.25);
    assert.equal(quantile([9], 0.5), 9);
  });

  test('least-squares slope', () => {
    assert.equal(linearSlope([1, 3, 5, 7]), 2);
    assert.equal(linearSlope([5]), 0);
  });
});

describe("Holt's linear method", () => {
  test('a straight line is followed exactly: zero error, zero-width interval', () => {
    const fit = holtFit([10, 12, 14, 16, 18], 0.5, 0.5);
    assert.equal(fit.level, 18);
    assert.equal(fit.trend, 2);
    assert.equal(fit.sse, 0);
    assert.deepEqual(holtForecast(fit, 3), [
      { h: 1, value: 20, lower: 20, upper: 20 },
      { h: 2, value: 22, lower: 22, upper: 22 },
      { h: 3, value: 24, lower: 24, upper: 24 },
    ]);
  });

  test('recursions, sigma^2 and the h-step variance on a hand-computed series', () => {
    // l0=10 b0=2; t1: e=0 l=12 b=2; t2: e=-3 l=12.5 b=1.25; t3: e=1.25 l=14.375 b=1.5625
    const fit = holtFit([10, 12, 11, 15], 0.5, 0.5);
    assert.equal(fit.level, 14.375);
    assert.equal(fit.trend, 1.5625);
    assert.equal(fit.sse, 10.5625);
    assert.equal(fit.sigma2, 5.28125);
    const [p1, p2] = holtForecast(fit, 2, 0.95);
    assert.equal(p1!.value, 15.9375);
    assert.equal(p2!.value, 17.5);
    close(p1!.upper - p1!.value, 1.959964 * Math.sqrt(5.28125));
    // sigma_2^2 = 5.28125 * (1 + 0.25 * 1.5^2) = 8.251953125
    close(p2!.upper - p2!.value, 1.959964 * Math.sqrt(8.251953125));
    close(p2!.value - p2!.lower, 1.959964 * Math.sqrt(8.251953125));
  });

  test('the grid search picks the parameters with the smallest error, deterministically', () => {
    const series = [100, 120, 90, 130, 110, 140, 105, 150, 120, 160];
    const best = holtFitBest(series);
    for (const a of [0.1, 0.5, 0.9])
      for (const b of [0.1, 0.5, 0.9]) assert.ok(best.sse <= holtFit(series, a, b).sse);
    assert.deepEqual(holtFitBest(series), best);
    assert.throws(() => holtFit([1], 0.5, 0.5), RangeError);
  });
});

describe('anomalies', () => {
  const day = (userId: number, date: string, tokens: number, tenantId = 1): UserDay => ({
    userId,
    username: `u${userId}`,
    tenantId,
    date,
    tokens,
    requests: 1,
  });
  const steady = (userId: number, tokens: number[], tenantId = 1) =>
    tokens.map((t, i) => day(userId, addDays('2026-03-01', i), t, tenantId));

  test('a planted spike is found with its z-score and severity; steady users are not', () => {
    const rows = [
      ...steady(1, [1000, 1100, 900, 1000, 1050, 950, 50_000]),
      ...steady(2, [500, 510, 490, 505, 495]),
    ];
    const found = detectAnomalies(rows);
    assert.equal(found.length, 1);
    const a = found[0]!;
    assert.equal(a.type, 'token_spike');
    assert.equal(a.userId, 1);
    assert.equal(a.date, '2026-03-07');
    // median 1000, |dev| = 0,100,100,0,50,50,49000 -> MAD 50; z = 0.6745 * 49000 / 50 = 661.01
    assert.equal(a.baselineMedian, 1000);
    assert.equal(a.mad, 50);
    assert.equal(a.zScore, 661.01);
    assert.equal(a.severity, 'critical');
  });

  test('fewer than 5 active days are not judged; zero days do not count', () => {
    assert.deepEqual(detectAnomalies(steady(1, [10, 10, 10, 9000])), []);
    assert.deepEqual(detectAnomalies(steady(1, [10, 0, 0, 0, 10, 9000])), []);
  });

  test('severity bands and drops', () => {
    assert.equal(severityOf(3.6), 'medium');
    assert.equal(severityOf(-6), 'high');
    assert.equal(severityOf(10), 'critical');
    const found = detectAnomalies(steady(3, [1000, 1010, 990, 1000, 1005, 995, 10]));
    assert.equal(found[0]?.type, 'token_drop');
  });

  test('the record key: type and day, SHA-256 of the sorted user ids, one group per tenant', () => {
    assert.equal(affectedUsersHash([10, 2, 3]), createHash('sha256').update('2,3,10').digest('hex'));
    const spike = [1000, 1000, 1000, 1000, 1000, 90_000];
    const groups = groupAnomalies(
      detectAnomalies([...steady(7, spike, 1), ...steady(4, spike, 1), ...steady(9, spike, 2)]),
    );
    assert.deepEqual(
      groups.map((g) => [g.key, g.tenantId, g.userIds]),
      [
        ['token_spike:2026-03-06', 1, [4, 7]],
        ['token_spike:2026-03-06', 2, [9]],
      ],
    );
    assert.equal(groups[0]!.hash, affectedUsersHash([7, 4]));
  });
});

describe('segmentation and recommendations', () => {
  test('quartile segments', () => {
    const users = [100, 200, 300, 400, 0].map((tokens, i) => ({ id: i, tokens }));
    const s = segmentUsers(users);
    assert.equal(s.p25, 175);
    assert.equal(s.p75, 325);
    assert.deepEqual(users.map(s.segmentOf), ['light', 'moderate', 'moderate', 'heavy', 'inactive']);
  });

  test('rules fire on their figures only', () => {
    const base = {
      anomalies: 0,
      topUserShare: 0.2,
      activeUsers: 5,
      inactiveUsers: 0,
      tools: [{ toolName: 't', tokensPerRequest: 100 }],
      overallTokensPerRequest: 100,
      weeklyChangePercent: 0,
    };
    assert.deepEqual(recommend(base), []);
    const all = recommend({
      ...base,
      anomalies: 2,
      topUserShare: 0.8,
      inactiveUsers: 1,
      tools: [{ toolName: 'big', tokensPerRequest: 300 }],
      weeklyChangePercent: 60,
    });
    assert.deepEqual(
      all.map((r) => r.type),
      ['review_anomalies', 'usage_growth', 'usage_concentration', 'tool_efficiency', 'inactive_users'],
    );
  });
});

describe('forecast days (document 2, Limits: integer 1 to 90, default 7)', () => {
  test('valid values and the default', () => {
    assert.equal(parseForecastDays(undefined), 7);
    assert.equal(parseForecastDays('1'), 1);
    assert.equal(parseForecastDays('90'), 90);
  });
  for (const bad of ['0', '91', 'abc', '1.5', '', '-3', ['1', '2']])
    test(`${JSON.stringify(bad)} is refused with the spec body`, () => {
      try {
        parseForecastDays(bad);
        assert.fail('accepted');
      } catch (e) {
        assert.ok(e instanceof BadRequestError);
        assert.equal(e.message, 'invalid_parameter');
        assert.deepEqual(e.extra, {
          message: 'days must be an integer from 1 to 90',
          parameter: 'days',
          received: bad,
          valid_range: '1-90',
        });
      }
    });
});

describe('days', () => {
  test('strict YYYY-MM-DD', () => {
    assert.ok(isDay('2026-02-28'));
    for (const bad of ['2026-02-30', '2026-2-1', '20260201', '2026-02-01T00:00:00Z'])
      assert.ok(!isDay(bad), bad);
  });
  test('windows, defaults and the 400 naming the parameter', () => {
    assert.deepEqual(resolveWindow({}, '2026-03-10', 7), { start: '2026-03-04', end: '2026-03-10' });
    assert.deepEqual(daysOf('2026-02-27', '2026-03-01'), ['2026-02-27', '2026-02-28', '2026-03-01']);
    assert.throws(
      () => resolveWindow({ start: '2026-03-05', end: '2026-03-01' }, '2026-03-10', 7),
      /^BadRequestError: end:/,
    );
  });
  test('zero-filled daily series and per-user totals', () => {
    const rows = [{ date: '2026-03-02', tokens: 5, inputTokens: 3, outputTokens: 2, requests: 1 }];
    assert.deepEqual(
      dailySeries(rows, '2026-03-01', '2026-03-02').map((d) => d.tokens),
      [0, 5],
    );
    const totals = userTotals([
      {
        userId: 1,
        username: 'a',
        tenantId: 1,
        date: 'x',
        tokens: 5,
        inputTokens: 0,
        outputTokens: 0,
        requests: 1,
      },
      {
        userId: 1,
        username: 'a',
        tenantId: 1,
        date: 'y',
        tokens: 7,
        inputTokens: 0,
        outputTokens: 0,
        requests: 0,
      },
    ]);
    assert.deepEqual([totals[0]!.tokens, totals[0]!.activeDays], [12, 2]);
  });
});
