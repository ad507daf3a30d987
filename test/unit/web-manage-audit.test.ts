// The audit log page's filter logic (web/src/pages/manage/audit-filters.ts, no DOM): the list query
// sent to GET /api/audit/logs, the export link, problems caught before the request, page bounds.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  AUDIT_PAGE_SIZE,
  auditExportHref,
  auditFilterProblem,
  auditQuery,
  detailsSummary,
  EMPTY_AUDIT_FILTERS,
  pageBounds,
} from '../../web/src/pages/manage/audit-filters.ts';

const f = (over: Partial<typeof EMPTY_AUDIT_FILTERS>) => ({ ...EMPTY_AUDIT_FILTERS, ...over });

test('auditQuery: trimmed, empty filters left out, page to offset', () => {
  assert.deepEqual(auditQuery(EMPTY_AUDIT_FILTERS, 0), { limit: AUDIT_PAGE_SIZE, offset: 0 });
  assert.deepEqual(
    auditQuery(f({ action: ' USER_CREATE ', severity: 'warning', start_date: '2026-01-01' }), 2),
    {
      action: 'USER_CREATE',
      severity: 'warning',
      start_date: '2026-01-01',
      limit: AUDIT_PAGE_SIZE,
      offset: 2 * AUDIT_PAGE_SIZE,
    },
  );
  assert.equal(auditQuery(EMPTY_AUDIT_FILTERS, -3).offset, 0);
});

test('auditExportHref: format and the date range only, URL-encoded', () => {
  assert.equal(auditExportHref(EMPTY_AUDIT_FILTERS, 'csv'), '/api/audit/logs/export?format=csv');
  assert.equal(
    auditExportHref(f({ start_date: '2026-01-01', end_date: '2026-01-31', action: 'X' }), 'json'),
    '/api/audit/logs/export?format=json&start_date=2026-01-01&end_date=2026-01-31',
  );
  assert.ok(!auditExportHref(f({ start_date: '2026-01-01&format=x' }), 'csv').includes('&format=x'));
});

test('auditFilterProblem: bad dates, reversed range, long text', () => {
  assert.equal(auditFilterProblem(EMPTY_AUDIT_FILTERS), null);
  assert.equal(auditFilterProblem(f({ start_date: '01/02/2026' })), 'From must be a date YYYY-MM-DD');
  assert.equal(auditFilterProblem(f({ end_date: 'x' })), 'To must be a date YYYY-MM-DD');
  assert.equal(
    auditFilterProblem(f({ start_date: '2026-02-01', end_date: '2026-01-01' })),
    'From must not be after To',
  );
  assert.equal(auditFilterProblem(f({ start_date: '2026-01-01', end_date: '2026-01-01' })), null);
  assert.equal(auditFilterProblem(f({ action: 'a'.repeat(101) })), 'Filters are at most 100 characters');
});

test('pageBounds and detailsSummary', () => {
  assert.deepEqual(pageBounds(0, 0), { from: 0, to: 0, pages: 1 });
  assert.deepEqual(pageBounds(0, 7), { from: 1, to: 7, pages: 1 });
  assert.deepEqual(pageBounds(1, 120), { from: 51, to: 100, pages: 3 });
  assert.deepEqual(pageBounds(2, 120), { from: 101, to: 120, pages: 3 });
  assert.equal(detailsSummary(null), '');
  assert.equal(detailsSummary({ a: 1 }), '{"a":1}');
  const long = detailsSummary({ x: 'y'.repeat(500) }, 20);
  assert.equal(long.length, 20);
  assert.ok(long.endsWith('…'));
});
