// The autonomous pages' pure logic (web/src/pages/autonomous/model.ts), imported by node: the creation
// body built from the form (single and batch, field errors before sending), the controls each status
// offers (checked against the real transition table of domain/autonomous/transitions.ts: a control
// the page offers as "the likely one" must be one the table accepts), the timeline's token sum, the
// bounded activity list, and diff line typing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WORKFLOW_STATUSES as DOMAIN_STATUSES } from '../../domain/autonomous/states.ts';
import { transition, type WorkflowState } from '../../domain/autonomous/transitions.ts';
import {
  appendActivity,
  buildCreateBody,
  controlsFor,
  createdTarget,
  describeActivity,
  diffLines,
  emptyCreateForm,
  explainFailure,
  MAX_ACTIVITY,
  type Milestone,
  projectPathHint,
  requirementOf,
  summarizeTimeline,
  timelineRows,
  tokenBreakdown,
  WORKFLOW_STATUSES,
} from '../../web/src/pages/autonomous/model.ts';

test('the page knows exactly the statuses of the domain', () => {
  assert.deepEqual([...WORKFLOW_STATUSES], [...DOMAIN_STATUSES]);
});

test('creation body: single with optional fields trimmed away, batch one requirement per line', () => {
  const f = { ...emptyCreateForm(), requirement: '  Make app.txt say fixed ', project_path: ' /p/app ' };
  assert.deepEqual(buildCreateBody(f), {
    errors: {},
    body: { requirement: 'Make app.txt say fixed', project_path: '/p/app', branch_strategy: 'worktree' },
  });
  const full = { ...f, cli_tool: 'cli_beta', model: 'm-1', branch_strategy: 'new_branch' };
  assert.deepEqual(buildCreateBody(full).body, {
    requirement: 'Make app.txt say fixed',
    project_path: '/p/app',
    cli_tool: 'cli_beta',
    model: 'm-1',
    branch_strategy: 'new_branch',
  });
  const batch = {
    ...emptyCreateForm(),
    mode: 'batch' as const,
    requirements: 'one\n\n  two \n#12\n',
    project_path: '/p',
  };
  batch.cli_tool = 'cli_beta';
  assert.deepEqual(buildCreateBody(batch).body, {
    items: [
      { requirement: 'one', cli_tool: 'cli_beta' },
      { requirement: 'two', cli_tool: 'cli_beta' },
      { requirement: '#12', cli_tool: 'cli_beta' },
    ],
    project_path: '/p',
  });
});

test('creation body: missing requirement, project or batch items are named; a batch over 50 refused', () => {
  const r = buildCreateBody(emptyCreateForm());
  assert.equal(r.body, undefined);
  assert.deepEqual(Object.keys(r.errors).sort(), ['project_path', 'requirement']);
  const b = buildCreateBody({
    ...emptyCreateForm(),
    mode: 'batch',
    requirements: ' \n ',
    project_path: '/p',
  });
  assert.deepEqual(Object.keys(b.errors), ['requirements']);
  const many = Array.from({ length: 51 }, (_, i) => `r${i}`).join('\n');
  const big = buildCreateBody({
    ...emptyCreateForm(),
    mode: 'batch',
    requirements: many,
    project_path: '/p',
  });
  assert.match(big.errors.requirements ?? '', /at most 50 .*51 given/);
});

test('createdTarget opens the single workflow, or the batch', () => {
  assert.deepEqual(createdTarget({ id: 'aw-1' }), { workflowId: 'aw-1' });
  assert.deepEqual(createdTarget({ batch: { id: 'ab-1' }, workflows: [{ id: 'aw-2' }] }), {
    batchId: 'ab-1',
    workflowId: 'aw-2',
  });
});

const stateOf = (status: (typeof DOMAIN_STATUSES)[number], pausedBy: string | null = null): WorkflowState =>
  ({
    status,
    phase: status === 'planning' || status === 'planning_timeout' ? 'planning' : 'development',
    pausedBy,
    previousStatus: status === 'paused' ? 'developing' : null,
    inBatch: false,
    feedbackPhase: null,
  }) as unknown as WorkflowState;

test('controls per status agree with the transition table', () => {
  const trigger = {
    pause: { type: 'pause' },
    resume: { type: 'resume' },
    stop: { type: 'stop' },
    retry: { type: 'retry' },
    done: { type: 'done' },
    verification_override: { type: 'verification_override' },
    extend: { type: 'extend_planning_timeout' },
  } as const;
  for (const status of DOMAIN_STATUSES)
    for (const pausedBy of status === 'paused' ? ['manual', 'verification'] : [null]) {
      const offered = controlsFor({ status, paused_by: pausedBy });
      // The first control (the likely one) and every status-specific one must be accepted.
      const mustPass = offered.filter(
        (c, i) =>
          (i === 0 && c !== 'delete') || c === 'retry' || c === 'verification_override' || c === 'extend',
      );
      for (const c of mustPass) {
        const r = transition(stateOf(status, pausedBy), trigger[c as keyof typeof trigger] as never);
        assert.ok(r.ok, `${c} offered first in ${status}/${pausedBy} but refused: ${!r.ok && r.reason}`);
      }
      // Stop is offered exactly when the table accepts it.
      assert.equal(
        offered.includes('stop'),
        transition(stateOf(status), { type: 'stop' }).ok,
        `stop in ${status}`,
      );
      // Retry likewise.
      assert.equal(
        offered.includes('retry'),
        transition(stateOf(status), { type: 'retry' }).ok,
        `retry in ${status}`,
      );
    }
  assert.deepEqual(controlsFor({ status: 'waiting', paused_by: null }).includes('feedback'), true);
  assert.deepEqual(controlsFor({ status: 'completed', paused_by: null }), ['delete']);
  assert.deepEqual(controlsFor({ status: 'failed', paused_by: null }), ['retry', 'delete']);
  assert.equal(controlsFor({ status: 'developing', paused_by: null }).includes('delete'), false);
  assert.deepEqual(controlsFor({ status: 'paused', paused_by: 'manual' }).slice(0, 2), ['resume', 'pause']);
});

const ms = (seq: number, phase: string, tokens: number, extra: Partial<Milestone> = {}): Milestone =>
  ({
    id: seq + 100,
    sequence: seq,
    phase,
    kind: phase,
    status: 'completed',
    phase_total_tokens: tokens,
    phase_input_tokens: tokens - 1,
    phase_output_tokens: 1,
    phase_request_count: 1,
    is_cancelled: false,
    ...extra,
  }) as Milestone;

test('the timeline sums per-milestone tokens, per phase in first-seen order', () => {
  const s = summarizeTimeline([ms(3, 'development', 30), ms(1, 'planning', 10), ms(2, 'planning', 12)]);
  assert.equal(s.total, 52);
  assert.equal(s.input, 49);
  assert.equal(s.output, 3);
  assert.equal(s.requests, 3);
  assert.deepEqual(s.byPhase, [
    { phase: 'planning', tokens: 22, milestones: 2 },
    { phase: 'development', tokens: 30, milestones: 1 },
  ]);
  // Numbers that arrive as strings (bigint columns on PostgreSQL) still add as numbers.
  assert.equal(summarizeTimeline([ms(1, 'p', '7' as unknown as number), ms(2, 'p', 5)]).total, 12);
  assert.equal(summarizeTimeline([]).total, 0);
});

test('timeline rows: retries of one step that failed the same way are one row with their count', () => {
  const enoent = 'runner_failure: the CLI could not be started: spawn claude ENOENT';
  const failed = (seq: number, attempt: number, error = enoent, extra: Partial<Milestone> = {}) =>
    ms(seq, 'planning', 2, { status: 'failed', attempt, error, ...extra });
  const rows = timelineRows([
    ms(1, 'preparation', 0, { attempt: 1 }),
    ...[1, 2, 3, 4, 5].map((a) => failed(a + 1, a)),
    failed(7, 6, 'runner_failure: the CLI exited with 3'),
    failed(8, 1),
    failed(9, 2, enoent, { is_cancelled: true }),
  ]);
  assert.deepEqual(
    rows.map((r) => [r.firstSequence, r.milestone.sequence, r.attempts, r.tokens.total]),
    [
      [1, 1, 1, 0],
      [2, 6, 5, 10],
      [7, 7, 1, 2],
      [8, 8, 1, 2],
      [9, 9, 1, 2],
    ],
  );
  // The rows' tokens still add up to the timeline's total.
  const all = [ms(1, 'p', 3), ...[1, 2].map((a) => failed(a + 1, a))];
  assert.equal(
    timelineRows(all).reduce((t, r) => t + r.tokens.total, 0),
    summarizeTimeline(all).total,
  );
});

test('a failed workflow is explained: cause and fix from its last failed step', () => {
  const w = { status: 'failed' as const, error: 'runner_failure: 5 attempts failed', cli_tool: 'cli_beta' };
  const step = (error: string) => [
    ms(1, 'planning', 0, { status: 'failed', attempt: 1, error: 'older' }),
    ms(2, 'planning', 0, { status: 'failed', attempt: 2, error }),
  ];
  const missing = explainFailure(
    w,
    step('runner_failure: the CLI could not be started: spawn claude ENOENT'),
  );
  assert.equal(missing?.summary, 'runner_failure: 5 attempts failed');
  assert.equal(
    missing?.cause,
    'The CLI `claude` (cli_beta) was not found on the server, so no step could start.',
  );
  assert.match(missing?.fix ?? '', /install it \(npm run clis:install.*autonomous\.cli_paths; then Retry/);
  assert.match(
    explainFailure(w, step('runner_failure: the CLI could not be started: spawn /opt/c EACCES'))?.cause ?? '',
    /`\/opt\/c` \(cli_beta\) is on the server but may not be run/,
  );
  assert.match(
    explainFailure(w, step('runner_failure: sandbox unavailable: no bwrap'))?.fix ?? '',
    /SVC_SANDBOX=off/,
  );
  assert.deepEqual(explainFailure(w, step('runner_failure: the CLI exited with 3')), {
    summary: w.error,
    cause: 'runner_failure: the CLI exited with 3',
    fix: null,
  });
  assert.equal(explainFailure({ ...w, status: 'completed' }, []), null);
  assert.equal(explainFailure({ ...w, error: null }, []), null);
});

test("the project path's hint names the caller's folders", () => {
  assert.match(projectPathHint(null), /tenant-<id> under a root of SVC_AUTONOMOUS_PROJECT_ROOTS/);
  assert.equal(
    projectPathHint(['/srv/p/tenant-3']),
    'Absolute path of a Git repository inside your project folder: /srv/p/tenant-3',
  );
  assert.match(
    projectPathHint(['/a/tenant-3', '/b/tenant-3']),
    /one of your project folders: \/a\/tenant-3, \/b\/tenant-3$/,
  );
  assert.match(projectPathHint([]), /no tenant/);
});

test('activity: events in words, keepalives collapse, the list stays bounded', () => {
  assert.equal(
    describeActivity('system', { subtype: 'status', status: 'verification_pending' }),
    'Status: verification pending',
  );
  assert.equal(describeActivity('usage', { usage: { input: 1200, output: 34 } }), 'Usage: 1,234 tokens');
  assert.equal(
    describeActivity('tool_use', { tool: 'Write', input: { path: 'a' } }),
    'Tool Write: {"path":"a"}',
  );
  assert.equal(
    describeActivity('milestone_updated', { kind: 'plan_review', status: 'completed' }),
    'Milestone plan review: completed',
  );
  let list = appendActivity([], 'keepalive', {}, 1);
  list = appendActivity(list, 'keepalive', {}, 2);
  assert.equal(list.length, 1);
  assert.equal(list[0]!.key, 2);
  for (let i = 0; i < MAX_ACTIVITY + 10; i++)
    list = appendActivity(list, 'assistant_text', { text: `t${i}`, line: 'main' }, i + 3);
  assert.equal(list.length, MAX_ACTIVITY);
  assert.equal(list.at(-1)!.text, `t${MAX_ACTIVITY + 9}`);
  assert.equal(list.at(-1)!.line, 'main');
});

test('diff lines are typed; the requirement is read from the snapshot', () => {
  const d = diffLines(
    'diff --git a/x b/x\nindex 1..2\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-broken\n+fixed\n same',
  );
  assert.deepEqual(
    d.map((l) => l.kind),
    ['file', 'meta', 'meta', 'meta', 'hunk', 'del', 'add', 'context'],
  );
  assert.deepEqual(diffLines(''), []);
  const base = { title: 'T' };
  assert.equal(
    requirementOf({ ...base, definition_snapshot: { requirement: { kind: 'text', text: 'do it' } } }),
    'do it',
  );
  assert.equal(
    requirementOf({ ...base, definition_snapshot: { requirement: { kind: 'issue_number', number: 12 } } }),
    '#12',
  );
  assert.equal(requirementOf({ ...base, definition_snapshot: null }), 'T');
});

test('token breakdown words, singular for one request', () => {
  assert.equal(tokenBreakdown(1234, 1200, 34, 2), '1,234 (1,200 in, 34 out, 2 requests)');
  assert.equal(tokenBreakdown(26, 18, 8, 1), '26 (18 in, 8 out, 1 request)');
});
