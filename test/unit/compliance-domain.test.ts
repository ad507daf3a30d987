// Compliance rules, pure: the security score formula and its components, retention cutoffs, audit
// patterns, robust-z anomalies, a user's profile, and the formula-safe CSV of reports.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type AuditEvent,
  activityProfile,
  auditAnomalies,
  auditPatterns,
} from '../../domain/compliance/audit-patterns.ts';
import { REPORT_TYPE_NAMES } from '../../domain/compliance/report-types.ts';
import { purgeBefore, retentionCutoffs } from '../../domain/compliance/retention.ts';
import { SECURITY_WEIGHTS, securityScore } from '../../domain/compliance/security-score.ts';
import { rowsToCsv } from '../../services/compliance/reports.ts';

const clean = {
  activeUsers: 20,
  administrators: 2,
  ssoUsers: 20,
  lockouts: 0,
  activeKeys: 4,
  staleKeys: 0,
  proxyRefusals: 0,
  proxyTokensIssued: 100,
};

test('security score: 100 with no risk signal; weights sum to 1; every component is returned', () => {
  const r = securityScore(clean);
  assert.equal(r.score, 100);
  assert.deepEqual(
    r.components.map((c) => c.name),
    ['lockouts', 'admin_ratio', 'sso_adoption', 'stale_keys', 'proxy_refusals'],
  );
  assert.ok(r.components.every((c) => c.penalty === 0));
  assert.equal(Math.round(Object.values(SECURITY_WEIGHTS).reduce((a, b) => a + b, 0) * 1000), 1000);
});

test('security score: each signal costs its weight times its penalty', () => {
  // No SSO at all: the full sso weight (20) is lost.
  assert.equal(securityScore({ ...clean, ssoUsers: 0 }).score, 80);
  // Half the keys stale: 0.5 * 15.
  assert.equal(securityScore({ ...clean, staleKeys: 2 }).score, 93);
  // 10 lockouts among 20 users: 0.5 * 25.
  assert.equal(securityScore({ ...clean, lockouts: 10 }).score, 88);
  // 30 % administrators: (0.3 - 0.1) / 0.4 = 0.5 of 20.
  assert.equal(securityScore({ ...clean, administrators: 6 }).score, 90);
  // 20 % of proxy calls refused: the full 20.
  const refused = securityScore({ ...clean, proxyRefusals: 25, proxyTokensIssued: 100 });
  assert.equal(refused.score, 80);
  assert.equal(refused.components.find((c) => c.name === 'proxy_refusals')?.value, 0.2);
  // Everything at once: 0.
  assert.equal(
    securityScore({
      ...clean,
      ssoUsers: 0,
      staleKeys: 4,
      lockouts: 40,
      administrators: 20,
      proxyRefusals: 100,
    }).score,
    0,
  );
});

test('retention cutoffs: audit by timestamp, data by day (the boundary day is kept)', () => {
  const now = new Date('2026-11-23T10:00:00Z');
  const c = retentionCutoffs(now, { auditLogRetentionDays: 90, dataRetentionDays: 365 });
  assert.equal(c.auditBefore.toISOString(), '2026-08-25T10:00:00.000Z');
  assert.equal(c.dataBefore, '2025-11-23');
  assert.equal(purgeBefore(now).toISOString(), '2026-10-24T10:00:00.000Z');
});

const ev = (iso: string, userId: number | null, action = 'LOGIN', success = true): AuditEvent => ({
  timestamp: new Date(iso),
  userId,
  username: userId == null ? null : `u${userId}`,
  action,
  success,
});

test('audit patterns: by hour, by day, top actors, failure rates per action', () => {
  const events = [
    ev('2026-11-01T09:10:00Z', 1),
    ev('2026-11-01T09:50:00Z', 1, 'LOGIN_FAILED', false),
    ev('2026-11-02T14:00:00Z', 2),
    ev('2026-11-02T14:30:00Z', 1, 'LOGIN_FAILED', false),
  ];
  const p = auditPatterns(events);
  assert.equal(p.total_events, 4);
  assert.equal(p.failed_events, 2);
  assert.equal(p.failure_rate, 0.5);
  assert.equal(p.by_hour.length, 24);
  assert.equal(p.by_hour[9]?.count, 2);
  assert.equal(p.by_hour[14]?.count, 2);
  assert.deepEqual(p.by_day, [
    { date: '2026-11-01', count: 2 },
    { date: '2026-11-02', count: 2 },
  ]);
  assert.deepEqual(p.top_actors[0], { user_id: 1, username: 'u1', count: 3 });
  assert.deepEqual(
    p.by_action.find((a) => a.action === 'LOGIN_FAILED'),
    { action: 'LOGIN_FAILED', total: 2, failed: 2, failure_rate: 1 },
  );
});

test('audit anomalies: a user-day far above the others is flagged; too few samples flag nothing', () => {
  const events: AuditEvent[] = [];
  for (let d = 1; d <= 9; d++)
    for (let i = 0; i < 4 + (d % 2); i++) events.push(ev(`2026-11-0${d}T10:00:00Z`, 1 + (d % 3)));
  for (let i = 0; i < 60; i++) events.push(ev('2026-11-05T11:00:00Z', 7));
  const a = auditAnomalies(events);
  assert.equal(a.anomalies.length, 1);
  assert.equal(a.anomalies[0]?.user_id, 7);
  assert.equal(a.anomalies[0]?.count, 60);
  assert.ok((a.anomalies[0]?.z_score ?? 0) > 3.5);
  assert.equal(auditAnomalies(events.slice(0, 8)).anomalies.length, 0);
});

test('activity profile: peak hour, active days, first and last event', () => {
  const p = activityProfile([
    ev('2026-11-01T09:00:00Z', 1),
    ev('2026-11-03T09:30:00Z', 1),
    ev('2026-11-03T20:00:00Z', 1, 'X', false),
  ]);
  assert.equal(p.peak_hour, 9);
  assert.equal(p.active_days, 2);
  assert.equal(p.failed_events, 1);
  assert.equal(p.first_event, '2026-11-01T09:00:00.000Z');
  assert.equal(p.last_event, '2026-11-03T20:00:00.000Z');
  assert.equal(activityProfile([]).peak_hour, null);
});

test('report CSV: formula-like cells are neutralised, quotes escaped', () => {
  const csv = rowsToCsv([
    { a: '=HYPERLINK("x")', b: 1 },
    { a: 'plain', c: '+1' },
  ]);
  assert.equal(csv, `a,b,c\r\n"'=HYPERLINK(""x"")",1,\r\nplain,,'+1\r\n`);
  assert.deepEqual(REPORT_TYPE_NAMES, [
    'usage_summary',
    'audit_activity',
    'access_review',
    'security_events',
    'data_retention',
  ]);
});
