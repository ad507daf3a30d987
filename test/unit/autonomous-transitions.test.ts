// The autonomous workflow state machine (domain/autonomous/transitions.ts), row by row of the spec's
// transition table (document 2, "States and transitions"), plus the refusals and the status sets.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ACTIVE_STATUSES,
  feedbackReturnPhase,
  isActive,
  isRunning,
  nextPhase,
  type PauseReason,
  PHASE_ORDER,
  PHASE_STATUS,
  type Phase,
  RUNNING_STATUSES,
  STATUS_CLASS,
  TERMINAL_STATUSES,
  WORKFLOW_STATUSES,
  type WorkflowStatus,
} from '../../domain/autonomous/states.ts';
import {
  initialState,
  TRIGGER_TYPES,
  type Trigger,
  temporalWorkflowId,
  transition,
  type WorkflowState,
} from '../../domain/autonomous/transitions.ts';

const PHASE_OF: Record<WorkflowStatus, Phase> = {
  queued: 'preparation',
  pending: 'preparation',
  preparing: 'preparation',
  planning: 'planning',
  developing: 'development',
  pr_review: 'pr_review',
  reporting: 'report',
  merging: 'merge',
  verification_pending: 'acceptance_verification',
  waiting: 'wait',
  paused: 'development',
  planning_timeout: 'planning',
  completed: 'acceptance_verification',
  failed: 'development',
  cancelled: 'development',
};

function st(status: WorkflowStatus, over: Partial<WorkflowState> = {}): WorkflowState {
  return {
    status,
    phase: PHASE_OF[status],
    pausedBy: status === 'paused' ? 'manual' : null,
    previousStatus: status === 'paused' ? 'developing' : status === 'planning_timeout' ? 'planning' : null,
    feedbackPhase: status === 'waiting' ? 'development' : null,
    inBatch: false,
    ...over,
  };
}

function ok(s: WorkflowState, t: Trigger) {
  const r = transition(s, t);
  if (!r.ok) assert.fail(`${t.type} from ${s.status} refused: ${r.reason}`);
  return r;
}
function refused(s: WorkflowState, t: Trigger, re?: RegExp) {
  const r = transition(s, t);
  assert.equal(
    r.ok,
    false,
    `${t.type} from ${s.status}${s.pausedBy ? `(${s.pausedBy})` : ''} must be refused`,
  );
  if (!r.ok && re) assert.match(r.reason, re);
  return r;
}

const EVERY_TRIGGER: Trigger[] = [
  { type: 'pause' },
  { type: 'resume' },
  { type: 'stop' },
  { type: 'retry' },
  { type: 'cancel_round', milestonePhase: 'development' },
  { type: 'resume_with_feedback', feedback: 'please add tests' },
  { type: 'planning_timeout' },
  { type: 'extend_planning_timeout' },
  { type: 'merge_succeeded', acceptanceEnabled: true },
  { type: 'verifier_verdict', verdict: 'confirmed' },
  { type: 'verification_override' },
  { type: 'hard_quota_error' },
  { type: 'app_quota_exceeded' },
  { type: 'quota_restored' },
  { type: 'merge_refused_by_rules' },
  { type: 'ci_repair_exhausted' },
  { type: 'transient_error', belowLimit: true },
  { type: 'phase_completed', acceptanceEnabled: true },
  { type: 'start' },
  { type: 'queue_release' },
  { type: 'done' },
  { type: 'fail' },
];

test('15 statuses, each classed once; active = non-terminal; running = the seven worked phases', () => {
  assert.equal(WORKFLOW_STATUSES.length, 15);
  assert.deepEqual(Object.keys(STATUS_CLASS).sort(), [...WORKFLOW_STATUSES].sort());
  assert.deepEqual([...RUNNING_STATUSES].sort(), [
    'developing',
    'merging',
    'planning',
    'pr_review',
    'preparing',
    'reporting',
    'verification_pending',
  ]);
  assert.deepEqual([...TERMINAL_STATUSES].sort(), ['cancelled', 'completed', 'failed']);
  assert.equal(ACTIVE_STATUSES.length, 12);
  for (const s of WORKFLOW_STATUSES) assert.equal(isActive(s), !TERMINAL_STATUSES.includes(s));
  for (const s of ['queued', 'pending', 'waiting', 'paused', 'planning_timeout'] as const)
    assert.equal(isRunning(s), false);
});

test('phase order, wait outside it, and the acceptance switch', () => {
  assert.deepEqual(
    [...PHASE_ORDER],
    ['preparation', 'planning', 'development', 'pr_review', 'report', 'merge', 'acceptance_verification'],
  );
  assert.equal(nextPhase('merge', true), 'acceptance_verification');
  assert.equal(nextPhase('merge', false), 'done');
  assert.equal(nextPhase('acceptance_verification', true), 'done');
  assert.equal(PHASE_STATUS.wait, 'waiting');
});

test('every trigger is covered by the test list, and every (status, trigger) pair answers', () => {
  assert.deepEqual(EVERY_TRIGGER.map((t) => t.type).sort(), [...TRIGGER_TYPES].sort());
  for (const s of WORKFLOW_STATUSES)
    for (const t of EVERY_TRIGGER) {
      const r = transition(st(s), t);
      if (r.ok) assert.ok(WORKFLOW_STATUSES.includes(r.next.status));
      else assert.ok(r.reason.length > 0);
    }
});

test('terminal statuses accept only retry (failed), cancel_round/done (failed)', () => {
  for (const s of ['completed', 'cancelled'] as const) for (const t of EVERY_TRIGGER) refused(st(s), t);
  const accepted = EVERY_TRIGGER.filter((t) => transition(st('failed'), t).ok).map((t) => t.type);
  assert.deepEqual(accepted.sort(), ['cancel_round', 'done', 'retry']);
});

test('row: active statuses -> pause -> paused (manual); running processes are frozen', () => {
  for (const s of ACTIVE_STATUSES) {
    if (s === 'paused' || s === 'planning_timeout') continue;
    const r = ok(st(s), { type: 'pause' });
    assert.equal(r.next.status, 'paused');
    assert.equal(r.next.pausedBy, 'manual');
    assert.equal(r.next.previousStatus, s);
    assert.deepEqual(r.effects, isRunning(s) ? ['freeze_process'] : []);
  }
  refused(st('paused'), { type: 'pause' }, /already paused/);
  refused(st('planning_timeout'), { type: 'pause' }, /extend the planning timeout/);
  refused(st('completed'), { type: 'pause' }, /only active/);
});

test('row: paused (manual) -> resume -> previous activity; the frozen process continues', () => {
  const paused = ok(st('developing'), { type: 'pause' }).next;
  const r = ok(paused, { type: 'resume' });
  assert.equal(r.next.status, 'developing');
  assert.equal(r.next.pausedBy, null);
  assert.equal(r.next.previousStatus, null);
  assert.deepEqual(r.effects, ['thaw_process']);
  // paused while queued: scheduling resumes, nothing to thaw
  const q = ok(ok(st('queued'), { type: 'pause' }).next, { type: 'resume' });
  assert.equal(q.next.status, 'queued');
  assert.deepEqual(q.effects, []);
  // a quota pause resumed by a person re-runs the phase (the process is gone)
  const quota = ok(st('merging'), { type: 'app_quota_exceeded' }).next;
  assert.deepEqual(ok(quota, { type: 'resume' }).effects, ['schedule_phase']);
  for (const s of WORKFLOW_STATUSES.filter((x) => x !== 'paused'))
    refused(st(s), { type: 'resume' }, /only a paused workflow/);
});

test('row: any active status -> stop -> cancelled; agent terminated, later batch items cancelled', () => {
  for (const s of ACTIVE_STATUSES) {
    const r = ok(st(s, { inBatch: true }), { type: 'stop' });
    assert.equal(r.next.status, 'cancelled');
    assert.ok(r.effects.includes('cancel_later_batch_items'));
    assert.equal(r.effects.includes('terminate_process'), isRunning(s) || s === 'paused');
    assert.ok(r.effects.includes('close_session_lines'));
  }
  assert.ok(!ok(st('developing'), { type: 'stop' }).effects.includes('cancel_later_batch_items'));
  for (const s of TERMINAL_STATUSES) refused(st(s), { type: 'stop' }, /already over/);
});

test('row: failed or planning_timeout -> retry -> resumes at the persisted phase; nothing else retries', () => {
  const f = ok(st('failed', { phase: 'merge' }), { type: 'retry' });
  assert.equal(f.next.status, 'merging');
  assert.equal(f.next.phase, 'merge');
  assert.deepEqual(f.effects, ['schedule_phase']);
  const p = ok(st('planning_timeout'), { type: 'retry' });
  assert.equal(p.next.status, 'planning');
  assert.deepEqual(p.effects, ['schedule_phase', 'start_planning_deadline']);
  for (const s of WORKFLOW_STATUSES.filter((x) => x !== 'failed' && x !== 'planning_timeout'))
    refused(st(s), { type: 'retry' }, /retry is only for failed or planning_timeout/);
});

test('row: cancel-round -> waiting; steps after the milestone cancelled; feedback returns to a suitable phase', () => {
  const r = ok(st('developing'), { type: 'cancel_round', milestonePhase: 'planning' });
  assert.equal(r.next.status, 'waiting');
  assert.equal(r.next.phase, 'wait');
  assert.equal(r.next.feedbackPhase, 'planning');
  assert.deepEqual(r.effects, ['terminate_process', 'cancel_steps_after_milestone']);
  const fromWaiting = ok(st('waiting'), { type: 'cancel_round', milestonePhase: 'pr_review' });
  assert.deepEqual(fromWaiting.effects, ['cancel_steps_after_milestone']);
  assert.equal(fromWaiting.next.feedbackPhase, 'development');
  refused(st('queued'), { type: 'cancel_round', milestonePhase: 'planning' }, /not started/);
  refused(st('pending'), { type: 'cancel_round', milestonePhase: 'planning' }, /not started/);
  refused(st('completed'), { type: 'cancel_round', milestonePhase: 'planning' }, /already over/);
  assert.equal(feedbackReturnPhase('preparation'), 'planning');
  assert.equal(feedbackReturnPhase('acceptance_verification'), 'development');
  assert.equal(feedbackReturnPhase(null), 'development');
});

test('row: waiting -> resume-with-feedback -> appropriate phase; feedback stored as a milestone', () => {
  const waiting = ok(st('developing'), { type: 'cancel_round', milestonePhase: 'development' }).next;
  const r = ok(waiting, { type: 'resume_with_feedback', feedback: 'use the existing parser' });
  assert.equal(r.next.status, 'developing');
  assert.equal(r.next.feedbackPhase, null);
  assert.deepEqual(r.effects, ['store_feedback_milestone', 'schedule_phase']);
  const toPlan = ok(st('waiting', { feedbackPhase: 'planning' }), {
    type: 'resume_with_feedback',
    feedback: 'x',
  });
  assert.equal(toPlan.next.status, 'planning');
  assert.ok(toPlan.effects.includes('start_planning_deadline'));
  refused(st('waiting'), { type: 'resume_with_feedback', feedback: '  \n' }, /feedback is required/);
  for (const s of WORKFLOW_STATUSES.filter((x) => x !== 'waiting'))
    refused(st(s), { type: 'resume_with_feedback', feedback: 'x' }, /only a waiting workflow/);
});

test('row: planning -> planning timeout -> planning_timeout; extension available', () => {
  const r = ok(st('planning'), { type: 'planning_timeout' });
  assert.equal(r.next.status, 'planning_timeout');
  assert.deepEqual(r.effects, ['terminate_process']);
  const ext = ok(r.next, { type: 'extend_planning_timeout' });
  assert.equal(ext.next.status, 'planning');
  assert.deepEqual(ext.effects, ['extend_planning_deadline', 'schedule_phase']);
  const early = ok(st('planning'), { type: 'extend_planning_timeout' });
  assert.equal(early.next.status, 'planning');
  assert.deepEqual(early.effects, ['extend_planning_deadline']);
  for (const s of WORKFLOW_STATUSES.filter((x) => x !== 'planning'))
    refused(st(s), { type: 'planning_timeout' });
  for (const s of WORKFLOW_STATUSES.filter((x) => x !== 'planning' && x !== 'planning_timeout'))
    refused(st(s), { type: 'extend_planning_timeout' });
});

test('rows: merging -> merge succeeds -> verification_pending (acceptance on) | completed (off)', () => {
  const on = ok(st('merging'), { type: 'merge_succeeded', acceptanceEnabled: true });
  assert.equal(on.next.status, 'verification_pending');
  assert.equal(on.next.phase, 'acceptance_verification');
  assert.deepEqual(on.effects, ['cleanup_branch_and_worktree', 'schedule_phase']);
  const off = ok(st('merging'), { type: 'merge_succeeded', acceptanceEnabled: false });
  assert.equal(off.next.status, 'completed');
  assert.deepEqual(off.effects, ['cleanup_branch_and_worktree', 'close_session_lines']);
  for (const s of WORKFLOW_STATUSES.filter((x) => x !== 'merging'))
    refused(st(s), { type: 'merge_succeeded', acceptanceEnabled: true });
});

test('rows: verification_pending -> verdicts; paused (verification) -> override -> completed', () => {
  const c = ok(st('verification_pending'), { type: 'verifier_verdict', verdict: 'confirmed' });
  assert.equal(c.next.status, 'completed');
  assert.deepEqual(c.effects, ['close_issue', 'close_session_lines']);
  for (const verdict of ['rejected', 'indeterminate', 'retries_exhausted'] as const) {
    const r = ok(st('verification_pending'), { type: 'verifier_verdict', verdict });
    assert.equal(r.next.status, 'paused');
    assert.equal(r.next.pausedBy, 'verification');
    assert.deepEqual(r.effects, []);
    const o = ok(r.next, { type: 'verification_override' });
    assert.equal(o.next.status, 'completed');
    assert.deepEqual(o.effects, ['record_verified_by', 'close_issue', 'close_session_lines']);
    // never auto-resumed
    refused(r.next, { type: 'quota_restored' }, /resumed only by a person/);
  }
  refused(st('merging'), { type: 'verifier_verdict', verdict: 'confirmed' });
  for (const by of ['manual', 'quota', 'hard_quota', 'repository_rules'] as PauseReason[])
    refused(
      st('paused', { pausedBy: by }),
      { type: 'verification_override' },
      /paused by its acceptance verification/,
    );
  refused(st('verification_pending'), { type: 'verification_override' });
});

test('rows: quota errors pause every running status; only the application quota pause auto-resumes', () => {
  for (const s of RUNNING_STATUSES) {
    const hard = ok(st(s), { type: 'hard_quota_error' });
    assert.equal(hard.next.status, 'paused');
    assert.equal(hard.next.pausedBy, 'hard_quota');
    assert.ok(!hard.effects.includes('schedule_auto_resume'));
    refused(hard.next, { type: 'quota_restored' }, /resumed only by a person/);
    assert.equal(ok(hard.next, { type: 'resume' }).next.status, s);

    const app = ok(st(s), { type: 'app_quota_exceeded' });
    assert.equal(app.next.pausedBy, 'quota');
    assert.deepEqual(app.effects, ['terminate_process', 'schedule_auto_resume']);
    const back = ok(app.next, { type: 'quota_restored' });
    assert.equal(back.next.status, s);
    assert.deepEqual(back.effects, ['schedule_phase']);
  }
  for (const s of ['queued', 'pending', 'waiting', 'paused', 'planning_timeout', 'failed'] as const) {
    refused(st(s), { type: 'hard_quota_error' });
    refused(st(s), { type: 'app_quota_exceeded' });
  }
});

test('a manual pause is never auto-resumed', () => {
  const manual = ok(st('developing'), { type: 'pause' }).next;
  refused(manual, { type: 'quota_restored' }, /a manual pause is never auto-resumed/);
  refused(st('developing'), { type: 'quota_restored' }, /only a paused workflow/);
});

test('rows: merging -> refused by repository rules -> paused; CI repair exhausted -> failed', () => {
  const r = ok(st('merging'), { type: 'merge_refused_by_rules' });
  assert.equal(r.next.status, 'paused');
  assert.equal(r.next.pausedBy, 'repository_rules');
  assert.equal(ok(r.next, { type: 'resume' }).next.status, 'merging');
  const f = ok(st('merging'), { type: 'ci_repair_exhausted' });
  assert.equal(f.next.status, 'failed');
  assert.equal(f.next.phase, 'merge');
  for (const s of WORKFLOW_STATUSES.filter((x) => x !== 'merging')) {
    refused(st(s), { type: 'merge_refused_by_rules' });
    refused(st(s), { type: 'ci_repair_exhausted' });
  }
});

test('row: running status -> transient error -> same status below the limit, failed at it', () => {
  for (const s of RUNNING_STATUSES) {
    const r = ok(st(s), { type: 'transient_error', belowLimit: true });
    assert.deepEqual(r.next, st(s));
    assert.deepEqual(r.effects, ['retry_step']);
    const f = ok(st(s), { type: 'transient_error', belowLimit: false });
    assert.equal(f.next.status, 'failed');
    assert.equal(f.next.phase, PHASE_OF[s]);
  }
  refused(st('waiting'), { type: 'transient_error', belowLimit: true });
});

test('phase order: pending -> start -> preparing -> ... -> merging -> verification -> completed', () => {
  let s = initialState({ queued: true, inBatch: true });
  assert.equal(s.status, 'queued');
  refused(s, { type: 'start' }, /only a pending workflow/);
  s = ok(s, { type: 'queue_release' }).next;
  assert.equal(s.status, 'pending');
  refused(s, { type: 'queue_release' });
  const started = ok(s, { type: 'start' });
  assert.equal(started.next.status, 'preparing');
  assert.deepEqual(started.effects, ['schedule_phase']);
  s = started.next;
  const seen: string[] = [s.status];
  for (let i = 0; i < 5; i++) {
    const r = ok(s, { type: 'phase_completed', acceptanceEnabled: true });
    s = r.next;
    seen.push(s.status);
    if (s.status === 'planning') assert.ok(r.effects.includes('start_planning_deadline'));
  }
  assert.deepEqual(seen, ['preparing', 'planning', 'developing', 'pr_review', 'reporting', 'merging']);
  const v = ok(s, { type: 'phase_completed', acceptanceEnabled: true });
  assert.equal(v.next.status, 'verification_pending');
  refused(v.next, { type: 'phase_completed', acceptanceEnabled: true }, /verifier verdict/);
  const direct = ok(s, { type: 'phase_completed', acceptanceEnabled: false });
  assert.equal(direct.next.status, 'completed');
  // phase and status out of step: refused
  refused(st('developing', { phase: 'planning' }), { type: 'phase_completed', acceptanceEnabled: true });
  refused(st('waiting'), { type: 'phase_completed', acceptanceEnabled: true });
});

test('done wraps up from a started workflow; fail from any active status', () => {
  const d = ok(st('waiting'), { type: 'done' });
  assert.equal(d.next.status, 'completed');
  assert.deepEqual(d.effects, ['cleanup_branch_and_worktree', 'close_session_lines']);
  assert.ok(ok(st('developing'), { type: 'done' }).effects.includes('terminate_process'));
  refused(st('pending'), { type: 'done' }, /not started/);
  for (const s of ACTIVE_STATUSES) assert.equal(ok(st(s), { type: 'fail' }).next.status, 'failed');
  // failed keeps its lines (it can be retried)
  assert.ok(!ok(st('developing'), { type: 'fail' }).effects.includes('close_session_lines'));
});

test('an unknown trigger or phase cannot fall through; Temporal ids are autonomous-<id>', () => {
  assert.throws(
    () => transition(st('developing'), { type: 'explode' } as unknown as Trigger),
    /unhandled case/,
  );
  assert.throws(() => feedbackReturnPhase('plan' as unknown as Phase), /unhandled case/);
  assert.equal(temporalWorkflowId('aw-1'), 'autonomous-aw-1');
});
