// The /api/analysis/* reads on the real API and database, with usage seeded through the upload API
// (seed.ts): every endpoint answers real figures and its defaults, parameters are validated with a 400
// naming them, view_analysis is required, and tenant scope holds for every read (a tenant sees only
// its own data, a system administrator all, a user without a tenant nothing). Anomaly detection finds
// the planted spike and records it once in anomaly_status.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { affectedUsersHash } from '../../../domain/analytics/anomalies.ts';
import { createUser, PASSWORD } from '../../support/actors.ts';
import { startTestApp, type TestApp } from '../../support/harness.ts';
import { api, login, type Session } from '../../support/session.ts';
import { EVIL_TOOL, EXPECTED, type Seeded, seedAnalytics, TODAY } from './seed.ts';

let app: TestApp;
let s: Seeded;
let userA: Session;
let adminB: Session;
let platform: Session;
let noTenant: Session;

const get = (who: Session | undefined, path: string) => api(app.url, 'GET', path, who ? { auth: who } : {});
const ok = async (who: Session, path: string) => {
  const r = await get(who, path);
  assert.equal(r.status, 200, `${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};

export const ANALYSIS_READS = [
  '/api/analysis/batch',
  '/api/analysis/key-metrics',
  '/api/analysis/hourly-usage',
  '/api/analysis/daily-hourly-usage',
  '/api/analysis/peak-usage',
  '/api/analysis/conversation-stats',
  '/api/analysis/user-segmentation',
  '/api/analysis/tool-comparison',
  '/api/analysis/anomaly-trend',
  '/api/analysis/recommendations',
  '/api/analysis/user-ranking',
  '/api/analysis/anomaly-detection',
];

before(async () => {
  app = await startTestApp();
  s = await seedAnalytics(app);
  userA = s.cast.actors.user.session!;
  adminB = s.cast.actors.other_tenant_admin.session!;
  platform = s.cast.admin;
  // A user whose tenant was removed after login (a tenantless user cannot log in at all).
  const u = await createUser(app, s.cast.admin, { role: 'user', tenant_id: s.cast.tenantA });
  noTenant = await login(app.url, u.username, PASSWORD);
  await app.database.sql.query('UPDATE users SET tenant_id = NULL WHERE id = ?', [u.id]);
});
after(async () => {
  await app?.close();
});

// First: the first caller of the detection is the one its record names.
describe('anomaly detection', () => {
  test('finds the planted spike, records it once in anomaly_status, filters by type and severity', async () => {
    const first = await ok(userA, '/api/analysis/anomaly-detection');
    assert.equal(first.method.name, 'robust_z_score');
    assert.equal(first.method.threshold, 3.5);
    assert.equal(first.count, 1);
    const a = first.anomalies[0];
    assert.deepEqual(
      [a.type, a.severity, a.username, a.date, a.tokens, a.baseline_median, a.mad, a.z_score],
      ['token_spike', 'critical', s.alice.username, '2026-03-27', 50_000, 1000, 50, 661.01],
    );
    const hash = affectedUsersHash([s.alice.id]);
    assert.equal(a.record.anomaly_type, 'token_spike:2026-03-27');
    assert.equal(a.record.affected_users_hash, hash);
    assert.equal(a.record.status, 'detected');
    assert.equal(a.record.processed_by, userA.user.id);
    assert.equal(a.record.newly_recorded, true);

    const again = await ok(userA, '/api/analysis/anomaly-detection');
    assert.equal(again.anomalies[0].record.newly_recorded, false);
    assert.equal(again.anomalies[0].record.id, a.record.id);
    // The same anomaly seen by a system administrator is the same record.
    const global = await ok(platform, '/api/analysis/anomaly-detection');
    assert.equal(global.anomalies[0].record.id, a.record.id);
    const rows = await app.database.sql.query<{ n: number }>(
      'SELECT COUNT(*) AS n FROM anomaly_status WHERE anomaly_type = ? AND affected_users_hash = ?',
      ['token_spike:2026-03-27', hash],
    );
    assert.equal(Number(rows[0]!.n), 1);
    const total = await app.database.sql.query<{ n: number }>('SELECT COUNT(*) AS n FROM anomaly_status');
    assert.equal(Number(total[0]!.n), 1);

    assert.equal((await ok(userA, '/api/analysis/anomaly-detection?type=token_drop')).count, 0);
    assert.equal(
      (await ok(userA, '/api/analysis/anomaly-detection?type=token_spike&severity=critical')).count,
      1,
    );
    assert.equal((await ok(userA, '/api/analysis/anomaly-detection?severity=medium')).count, 0);
    const bad = await get(userA, '/api/analysis/anomaly-detection?severity=huge');
    assert.equal(bad.status, 400);
    assert.match(bad.body.error, /^severity: /);
  });
});

describe('access', () => {
  test('401 without a session, 403 without view_analysis (readonly), 200 for user and manager', async () => {
    for (const path of ANALYSIS_READS) {
      assert.equal((await get(undefined, path)).status, 401, path);
      const r = await get(s.cast.actors.readonly.session, path);
      assert.equal(r.status, 403, path);
      assert.deepEqual(r.body, { error: 'Permission required: view_analysis' });
      assert.equal((await get(s.cast.actors.manager.session, path)).status, 200, path);
    }
  });
});

describe('figures (tenant A user, today 2026-03-31, window 03-02..03-31)', () => {
  test('batch: totals, zero-filled daily series, by tool and host; start/end/host filters', async () => {
    const b = await ok(userA, '/api/analysis/batch');
    assert.equal(b.start, '2026-03-02');
    assert.equal(b.end, TODAY);
    assert.equal(b.host, null);
    assert.equal(b.totals.tokens, EXPECTED.tenantA.tokens);
    assert.equal(b.totals.input_tokens, EXPECTED.tenantA.input);
    assert.equal(b.totals.output_tokens, EXPECTED.tenantA.output);
    assert.equal(b.totals.requests, EXPECTED.tenantA.requests);
    assert.equal(b.totals.messages, EXPECTED.tenantA.messages);
    assert.equal(b.totals.active_users, 2);
    assert.equal(b.daily.length, 30);
    assert.equal(b.daily.find((d: any) => d.date === '2026-03-27').tokens, 50_200);
    assert.equal(b.daily.find((d: any) => d.date === '2026-03-02').tokens, 0);
    assert.deepEqual(
      b.by_tool.map((t: any) => [t.tool_name, t.tokens, t.requests, t.share_percent, t.hosts]),
      [['tool-a', 58_000, 13, 100, ['host-1']]],
    );
    assert.deepEqual(
      b.by_host.map((h: any) => [h.host_name, h.tokens]),
      [['host-1', 58_000]],
    );
    const day = await ok(userA, '/api/analysis/batch?start=2026-03-27&end=2026-03-27&host=host-1');
    assert.equal(day.totals.tokens, 50_200);
    assert.equal(day.totals.messages, 3);
    assert.equal(day.daily.length, 1);
    const other = await ok(userA, '/api/analysis/batch?host=host-2');
    assert.equal(other.totals.tokens, 0);
  });

  test('batch: malformed dates and an inverted range are 400 naming the parameter', async () => {
    const bad = await get(userA, '/api/analysis/batch?start=2026-02-30');
    assert.equal(bad.status, 400);
    assert.match(bad.body.error, /^start: /);
    const inverted = await get(userA, '/api/analysis/batch?start=2026-03-10&end=2026-03-01');
    assert.equal(inverted.status, 400);
    assert.match(inverted.body.error, /^end: /);
    assert.equal((await get(userA, '/api/analysis/batch?end=31-03-2026')).status, 400);
  });

  test('key-metrics: the window against the 30 days before it, and today', async () => {
    const k = await ok(userA, '/api/analysis/key-metrics');
    assert.deepEqual(k.period, { start: '2026-03-02', end: TODAY });
    assert.deepEqual(k.previous_period, { start: '2026-01-31', end: '2026-03-01' });
    assert.equal(k.tokens, EXPECTED.tenantA.tokens);
    assert.equal(k.requests, 13);
    assert.equal(k.messages, 21);
    assert.equal(k.active_users, 2);
    assert.equal(k.tokens_per_request, 4461.54);
    assert.equal(k.avg_daily_tokens, Math.round(58_000 / 30));
    assert.deepEqual(k.today, { date: TODAY, tokens: 200, requests: 1 });
    assert.equal(k.previous.tokens, 0);
    assert.equal(k.change_percent.tokens, null);
  });

  test('hourly-usage: 24 UTC hours of today by default; date, tool and host filters', async () => {
    const h = await ok(userA, '/api/analysis/hourly-usage');
    assert.equal(h.date, TODAY);
    assert.equal(h.hours.length, 24);
    assert.equal(h.hours[15].tokens, 200);
    assert.equal(h.hours[15].requests, 1);
    assert.equal(h.peak_hour, 15);
    const d = await ok(userA, '/api/analysis/hourly-usage?date=2026-03-27&tool=tool-a&host=host-1');
    assert.equal(d.hours[10].tokens, 50_000);
    assert.equal(d.hours[10].messages, 2);
    assert.equal(d.hours[10].requests, 1);
    assert.equal(d.totals.tokens, 50_200);
    assert.equal(d.peak_hour, 10);
    assert.equal((await ok(userA, '/api/analysis/hourly-usage?date=2026-03-27&tool=nope')).totals.tokens, 0);
    const bad = await get(userA, '/api/analysis/hourly-usage?date=yesterday');
    assert.equal(bad.status, 400);
    assert.match(bad.body.error, /^date: /);
  });

  test('daily-hourly-usage: 7 days by 24 hours', async () => {
    const d = await ok(userA, '/api/analysis/daily-hourly-usage');
    assert.deepEqual([d.start, d.end, d.days.length], ['2026-03-25', TODAY, 7]);
    const d27 = d.days.find((x: any) => x.date === '2026-03-27');
    assert.equal(d27.tokens_by_hour[10], 50_000);
    assert.equal(d27.tokens_by_hour[15], 200);
    assert.equal(d27.messages_by_hour[10], 2);
    assert.equal(d27.tokens, 50_200);
  });

  test('peak-usage: peak hour, day and weekday', async () => {
    const p = await ok(userA, '/api/analysis/peak-usage');
    assert.deepEqual(p.peak_hour, { hour: 10, tokens: 57_000, messages: 16 });
    assert.deepEqual(p.peak_day, { date: '2026-03-27', tokens: 50_200, requests: 2 });
    assert.equal(p.peak_weekday, 'friday');
    assert.equal(p.by_hour.length, 24);
  });

  test('conversation-stats: conversations by session or conversation id', async () => {
    const c = await ok(userA, '/api/analysis/conversation-stats');
    assert.equal(c.conversations, 9);
    assert.equal(c.messages, 21);
    assert.equal(c.requests, 13);
    assert.equal(c.tokens, 58_000);
    assert.equal(c.max_messages, 5);
    assert.equal(c.multi_day_conversations, 1);
    assert.equal(c.avg_messages_per_conversation, 2.33);
    assert.deepEqual(c.by_tool, [{ tool_name: 'tool-a', conversations: 9, messages: 21, tokens: 58_000 }]);
  });

  test('user-segmentation: quartiles of active users, the rest inactive', async () => {
    const g = await ok(userA, '/api/analysis/user-segmentation');
    assert.deepEqual(g.thresholds, { p25: 15_000, p75: 43_000 });
    assert.deepEqual(
      g.segments.heavy.users.map((u: any) => u.username),
      [s.alice.username],
    );
    assert.deepEqual(
      g.segments.light.users.map((u: any) => u.username),
      [s.abe.username],
    );
    assert.equal(g.segments.moderate.count, 0);
    // tenant A: tenant_admin, manager, user, readonly of the cast, without usage.
    assert.equal(g.segments.inactive.count, 4);
    assert.equal(g.total_users, 6);
  });

  test('tool-comparison', async () => {
    const t = await ok(userA, '/api/analysis/tool-comparison');
    assert.deepEqual(
      t.tools.map((x: any) => [x.tool_name, x.tokens, x.requests, x.tokens_per_request, x.active_days]),
      [['tool-a', 58_000, 13, 4461.54, 12]],
    );
  });

  test('user-ranking: default limit 10, limit, and validation', async () => {
    const r = await ok(userA, '/api/analysis/user-ranking');
    assert.equal(r.limit, 10);
    assert.deepEqual(
      r.ranking.map((u: any) => [u.rank, u.username, u.tokens, u.requests, u.active_days]),
      [
        [1, s.alice.username, EXPECTED.aliceTokens, 8, 8],
        [2, s.abe.username, EXPECTED.abeTokens, 5, 5],
      ],
    );
    assert.equal((await ok(userA, '/api/analysis/user-ranking?limit=1')).ranking.length, 1);
    for (const bad of ['0', 'x', '1.5', '101']) {
      const b = await get(userA, `/api/analysis/user-ranking?limit=${bad}`);
      assert.equal(b.status, 400, bad);
      assert.match(b.body.error, /^limit: /);
    }
  });

  test('anomaly-trend and recommendations see the planted spike', async () => {
    const t = await ok(userA, '/api/analysis/anomaly-trend');
    assert.equal(t.method.name, 'robust_z_score');
    assert.equal(t.total, 1);
    assert.equal(t.days.length, 30);
    assert.deepEqual(
      t.days.find((d: any) => d.date === '2026-03-27'),
      {
        date: '2026-03-27',
        anomalies: 1,
        spikes: 1,
        drops: 0,
        users_affected: 1,
      },
    );
    const rec = await ok(userA, '/api/analysis/recommendations');
    const types = rec.recommendations.map((x: any) => x.type);
    assert.ok(types.includes('review_anomalies'), JSON.stringify(types));
    assert.ok(types.includes('inactive_users'));
    assert.equal(rec.basis.inactive_users, 4);
    assert.equal(rec.basis.anomalies, 1);
  });
});

describe('tenant scope (rule 5) on every read', () => {
  const text = (b: unknown) => JSON.stringify(b);

  test('tenant A never sees tenant B or tenant 1, and tenant B never sees tenant A', async () => {
    for (const path of ANALYSIS_READS) {
      const a = text(await ok(userA, path));
      for (const foreign of ['tool-b', 'host-2', s.bea.username, EVIL_TOOL])
        assert.ok(!a.includes(foreign), `${path}: ${foreign}`);
      const b = text(await ok(adminB, path));
      for (const foreign of ['tool-a', 'host-1', s.alice.username, s.abe.username, EVIL_TOOL])
        assert.ok(!b.includes(foreign), `${path}: ${foreign}`);
    }
    const b = await ok(adminB, '/api/analysis/batch');
    assert.equal(b.totals.tokens, EXPECTED.tenantB.tokens);
    assert.equal(b.totals.requests, EXPECTED.tenantB.requests);
    assert.deepEqual(
      (await ok(adminB, '/api/analysis/user-ranking')).ranking.map((u: any) => u.username),
      [s.bea.username],
    );
    assert.equal((await ok(adminB, '/api/analysis/anomaly-detection')).count, 0);
  });

  test('a system administrator sees every tenant', async () => {
    const b = await ok(platform, '/api/analysis/batch');
    assert.equal(b.totals.tokens, EXPECTED.all.tokens);
    assert.deepEqual(b.by_tool.map((t: any) => t.tool_name).sort(), [EVIL_TOOL, 'tool-a', 'tool-b'].sort());
    const r = await ok(s.cast.actors.legacy_admin.session!, '/api/analysis/user-ranking');
    assert.deepEqual(
      r.ranking.map((u: any) => u.username),
      [s.alice.username, s.bea.username, s.abe.username],
    );
  });

  test('a user without a tenant sees nothing', async () => {
    for (const path of ANALYSIS_READS) {
      const body = text(await ok(noTenant, path));
      for (const any of ['tool-a', 'tool-b', s.alice.username, s.bea.username, EVIL_TOOL])
        assert.ok(!body.includes(any), `${path}: ${any}`);
    }
    const b = await ok(noTenant, '/api/analysis/batch');
    assert.equal(b.totals.tokens, 0);
    assert.equal(b.totals.messages, 0);
    assert.equal((await ok(noTenant, '/api/analysis/user-segmentation')).total_users, 0);
  });
});
