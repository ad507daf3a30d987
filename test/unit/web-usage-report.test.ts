// The usage report page's pure parts (web/src/pages/reports/report-view.ts): the date presets in UTC
// ("last week" is the calendar week before this one, Monday to Sunday), the header-click sort with
// ties in the API's order, and the exports: the shown rows in their order, cells a spreadsheet would
// run as formulas made inert, quotes doubled.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  nextSort,
  presetRange,
  type ReportRow,
  reportCsv,
  reportJson,
  sortRows,
  type UsageReport,
} from '../../web/src/pages/reports/report-view.ts';

const row = (label: string, tokens: number, cost = 0): ReportRow => ({
  key: label,
  label,
  input_tokens: tokens,
  output_tokens: 0,
  tokens,
  requests: 1,
  cost,
});

test('presets: last 7 and 30 days end today; last week is the previous Monday to Sunday', () => {
  const wed = new Date('2026-11-25T23:30:00Z');
  assert.deepEqual(presetRange('last7', wed), { start: '2026-11-19', end: '2026-11-25' });
  assert.deepEqual(presetRange('last30', wed), { start: '2026-10-27', end: '2026-11-25' });
  assert.deepEqual(presetRange('lastweek', wed), { start: '2026-11-16', end: '2026-11-22' });
  // On a Monday and on a Sunday the previous week is still the one before the current week.
  assert.deepEqual(presetRange('lastweek', new Date('2026-11-23T00:00:00Z')), {
    start: '2026-11-16',
    end: '2026-11-22',
  });
  assert.deepEqual(presetRange('lastweek', new Date('2026-11-29T12:00:00Z')), {
    start: '2026-11-16',
    end: '2026-11-22',
  });
});

test('sort: a click flips the same column, another column starts at its natural order; ties keep the API order', () => {
  assert.deepEqual(nextSort({ key: 'tokens', dir: 'descending' }, 'tokens'), {
    key: 'tokens',
    dir: 'ascending',
  });
  assert.deepEqual(nextSort({ key: 'tokens', dir: 'ascending' }, 'label'), {
    key: 'label',
    dir: 'ascending',
  });
  assert.deepEqual(nextSort({ key: 'label', dir: 'ascending' }, 'cost'), { key: 'cost', dir: 'descending' });
  const rows = [row('bob', 10), row('Alice', 30), row('carol', 10)];
  const labels = (r: ReportRow[]) => r.map((x) => x.label);
  assert.deepEqual(labels(sortRows(rows, { key: 'tokens', dir: 'descending' })), ['Alice', 'bob', 'carol']);
  assert.deepEqual(labels(sortRows(rows, { key: 'tokens', dir: 'ascending' })), ['bob', 'carol', 'Alice']);
  assert.deepEqual(labels(sortRows(rows, { key: 'label', dir: 'ascending' })), ['Alice', 'bob', 'carol']);
});

test('exports: the shown rows in order, then the totals; formula-looking text made inert', () => {
  const report: UsageReport = {
    period: { start_date: '2026-11-16', end_date: '2026-11-22' },
    group_by: 'tool',
    own_figures_only: false,
    cost_currency: 'USD',
    note: 'Planning estimates',
    rows: [row('=cmd', 5, 0.0225), row('say "hi", ok', 7, 1)],
    totals: { input_tokens: 12, output_tokens: 0, tokens: 12, requests: 2, cost: 1.0225 },
  };
  const shown = sortRows(report.rows, { key: 'tokens', dir: 'descending' });
  assert.equal(
    reportCsv(report, shown),
    'Tool,Input tokens,Output tokens,Total tokens,Requests,Estimated cost (USD)\r\n' +
      '"say ""hi"", ok",7,0,7,1,1\r\n' +
      "'=cmd,5,0,5,1,0.0225\r\n" +
      'Total,12,0,12,2,1.0225\r\n',
  );
  const json = JSON.parse(reportJson(report, shown, { key: 'tokens', dir: 'descending' }));
  assert.deepEqual(json.rows, shown);
  assert.deepEqual(json.sort, { column: 'tokens', direction: 'descending' });
  assert.deepEqual(json.totals, report.totals);
});

test("the CLIs' measured figures are columns of the table and the CSV only when the report has them", () => {
  const base: UsageReport = {
    period: { start_date: '2026-11-01', end_date: '2026-11-07' },
    group_by: 'tool',
    own_figures_only: false,
    cost_currency: 'USD',
    note: 'estimate',
    rows: [row('codex', 10)],
    totals: { input_tokens: 10, output_tokens: 0, tokens: 10, requests: 1, cost: 0 },
  };
  assert.equal(
    reportCsv(base, base.rows).split('\r\n')[0],
    'Tool,Input tokens,Output tokens,Total tokens,Requests,Estimated cost (USD)',
  );
  const measured = {
    lines_added: 52,
    lines_removed: 8,
    commits: 2,
    pull_requests: 0,
    edit_accept_rate: 75,
    active_hours: 1.5,
  };
  const none = {
    lines_added: null,
    lines_removed: null,
    commits: null,
    pull_requests: null,
    edit_accept_rate: null,
    active_hours: null,
  };
  const rows = [
    { ...row('claude-code', 20), ...measured },
    { ...row('codex', 10), ...none },
  ];
  const report = { ...base, rows, totals: { ...base.totals, tokens: 30, ...measured } };
  const csv = reportCsv(report, rows).split('\r\n');
  assert.equal(
    csv[0],
    'Tool,Input tokens,Output tokens,Total tokens,Requests,Estimated cost (USD),Lines added,Lines removed,Commits,Pull requests,Edit accept rate (%),Active hours',
  );
  assert.equal(csv[1], 'claude-code,20,0,20,1,0,52,8,2,0,75,1.5');
  assert.equal(csv[2], 'codex,10,0,10,1,0,,,,,,', 'a tool without figures: empty cells, not zeros');
});
