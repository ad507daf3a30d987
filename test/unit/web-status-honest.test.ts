// Issue 28 items 5 and 6, the pure parts: a flagged message's verdict in words
// (web/src/pages/messages/filters.ts), the links from a content-filter alert to its messages
// (web/src/pages/alerts/alert-list.ts), compact chart labels (web/src/ui/format.ts) and the first-run
// steps per role (web/src/pages/dashboard/first-run-steps.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ROLE_TEMPLATES, type Role } from '../../domain/permissions.ts';
import type { Viewer } from '../../web/src/auth/access.ts';
import { flaggedMessageLinks } from '../../web/src/pages/alerts/alert-list.ts';
import { firstRunSteps, isFirstRun } from '../../web/src/pages/dashboard/first-run-steps.ts';
import { verdictWords } from '../../web/src/pages/messages/filters.ts';
import { formatCompact } from '../../web/src/ui/format.ts';

test('verdictWords: what the filter did and each rule with its kind and action; null when clean', () => {
  assert.equal(verdictWords({ filter_verdict: null, filter_rules: [] }), null);
  assert.equal(verdictWords({}), null);
  assert.equal(
    verdictWords({
      filter_verdict: 'blocked',
      filter_rules: [
        { rule_id: 7, type: 'keyword', action: 'block', description: 'Secret keys' },
        { rule_id: 9, type: 'regex', action: 'warn', description: null },
      ],
    }),
    'Blocked by the content filter: rule “Secret keys” (keyword, action block); rule “#9” (regex, action warn)',
  );
  assert.equal(verdictWords({ filter_verdict: 'review' }), 'Sent to review by the content filter');
});

test('flaggedMessageLinks: each named message becomes the messages page of its day, tool and host', () => {
  const links = flaggedMessageLinks({
    alert_type: 'content_filter',
    message:
      'Stored flagged (filter_verdict = blocked). Rules: 3. Messages: 2026-03-05/claude/h1/m-1, 2026-03-06/qwen/h2/a/b',
  });
  assert.deepEqual(links, [
    {
      href: '/messages?start_date=2026-03-05&end_date=2026-03-05&tool=claude&host=h1',
      label: 'Message m-1 (claude, 2026-03-05)',
    },
    {
      href: '/messages?start_date=2026-03-06&end_date=2026-03-06&tool=qwen&host=h2',
      label: 'Message a/b (qwen, 2026-03-06)',
    },
  ]);
  assert.deepEqual(
    flaggedMessageLinks({ alert_type: 'security', message: 'Messages: 2026-03-05/a/b/c' }),
    [],
  );
  assert.deepEqual(flaggedMessageLinks({ alert_type: 'content_filter', message: null }), []);
  assert.deepEqual(flaggedMessageLinks({ alert_type: 'content_filter', message: 'Messages: x/y' }), []);
});

test('formatCompact: short axis labels above a million', () => {
  assert.equal(formatCompact(1_234_567), '1.2M');
  assert.equal(formatCompact(45_000), '45K');
  assert.equal(formatCompact(12), '12');
  assert.equal(formatCompact(2_500_000_000), '2.5B');
  assert.equal(formatCompact(Number.NaN), '—');
});

test('first run: only without any usage; each step only for roles that can take it', () => {
  assert.equal(isFirstRun({ total_tokens: 0, total_requests: 0 }), true);
  assert.equal(isFirstRun({ total_tokens: 0, total_requests: 1 }), false);
  const as = (role: Role): Viewer => ({ role, permissions: [...ROLE_TEMPLATES[role]] });
  const keys = (role: Role) => firstRunSteps(as(role)).map((s) => s.key);
  assert.deepEqual(keys('platform_admin'), ['usage', 'machine', 'key']);
  assert.deepEqual(keys('tenant_admin'), ['usage', 'key']);
  assert.deepEqual(keys('user'), ['usage']);
  assert.deepEqual(keys('manager'), ['usage']);
  assert.deepEqual(keys('readonly'), []);
  const machine = firstRunSteps(as('platform_admin')).find((s) => s.key === 'machine')!;
  assert.deepEqual(
    machine.links.map((l) => l.href),
    ['/manage/machines', '/remote'],
  );
});
