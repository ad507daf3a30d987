// One Temporal workflow per autonomous workflow (`autonomous-<id>`, issue 13 item 2): it drives the
// phases preparation -> planning -> development -> pr_review -> report -> merge ->
// acceptance_verification (and `wait`) through the pure state machine (domain/autonomous/
// transitions.ts). Every state change goes through `transition` and is persisted (compare-and-set)
// before its effects run; controls are updates whose validators run the same function, so a refused
// control never reaches history (workflows/autonomous/contract.ts).
//
// Durable by construction: every step is an activity (runner, forge, database), so a worker killed
// mid-step resumes at the same step on another worker with nothing duplicated (milestones are
// begun by step key). The database row is the record; this run's memory adds only the steps done in
// the current phase visit, attempt counters, usage cursors and the planning deadline, which
// continue-as-new carries over. A run that ended (a `failed` workflow after 30 days, a terminated run)
// is started again by the API from the row.
//
// Process control: the CLI runner reads the row's status every second, so persisting `paused` freezes
// the running agent and persisting its previous status lets it continue; stop, cancel-round, done and
// the planning timeout also cancel the running phase's scope, which cancels the runner activity (its
// process group is killed).
import {
  ActivityCancellationType,
  ApplicationFailure,
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  isCancellation,
  proxyActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { AutonomousAcceptanceActivities } from '../../activities/autonomous/acceptance.ts';
import type { AutonomousMergeStageActivities } from '../../activities/autonomous/merge-stage.ts';
import type {
  AutonomousOrchestrationActivities,
  TransitionFields,
} from '../../activities/autonomous/orchestration.ts';
import type { createAutonomousRunnerActivities } from '../../activities/autonomous/run-cli.ts';
import {
  type AutonomousError,
  classifyStepResult,
  decideAfterError,
} from '../../domain/autonomous/errors.ts';
import { DEFAULT_PREPARATION_RETRY_INITIAL_SECONDS } from '../../domain/autonomous/limits.ts';
import { LINE_OF_KIND, type MilestoneKind, milestoneOutcome } from '../../domain/autonomous/milestones.ts';
import {
  ACCEPTANCE_VERDICTS,
  type PromptFacts,
  parseVerdict,
  REVIEW_VERDICTS,
  stepPrompt,
} from '../../domain/autonomous/prompts.ts';
import {
  assertExhaustive,
  isRunning,
  isTerminal,
  type LinearPhase,
  STATUS_CLASS,
} from '../../domain/autonomous/states.ts';
import {
  type Effect,
  type Trigger,
  transition,
  type WorkflowState,
} from '../../domain/autonomous/transitions.ts';
import type { AutonomousContext } from '../../domain/autonomous/workflow-context.ts';
import {
  type Actor,
  AUTONOMOUS_REFUSED,
  type AutonomousCarried,
  type AutonomousInput,
  type ControlResult,
  cancelRoundUpdate,
  doneUpdate,
  extendPlanningTimeoutUpdate,
  pauseUpdate,
  quotaExceededSignal,
  quotaRestoredSignal,
  resumeUpdate,
  resumeWithFeedbackUpdate,
  retryUpdate,
  stateQuery,
  stopUpdate,
  temporalWorkflowId,
  verificationOverrideUpdate,
  wakeSignal,
} from './contract.ts';

type Runner = ReturnType<typeof createAutonomousRunnerActivities>;
/** activities/autonomous/scheduling.ts (the slot claim that honours both concurrency limits). */
interface SchedulingActivities {
  claimAutonomousSlot(input: {
    workflowId: string;
    next: WorkflowState;
  }): Promise<{ outcome: 'started' | 'full' | 'not_pending'; status: string; reason?: string }>;
}
type RunResult = Awaited<ReturnType<Runner['runAutonomousCli']>>;

const acts = proxyActivities<
  AutonomousOrchestrationActivities & AutonomousAcceptanceActivities & SchedulingActivities & Runner
>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 8 },
});
/**
 * The first import of a project may clone a large repository: a regular activity with room for it.
 * Its retries start after `initialSeconds` (autonomous.preparation_retry_initial_seconds, carried in
 * the context; 2 s by default) and double up to 30 s, 5 attempts in all.
 */
const slowActivities = (initialSeconds: number) =>
  proxyActivities<AutonomousOrchestrationActivities>({
    startToCloseTimeout: '15 minutes',
    retry: {
      initialInterval: `${Math.round(initialSeconds * 1000)} milliseconds`,
      maximumInterval: '30 seconds',
      maximumAttempts: 5,
    },
  });
/** A CI run; its heartbeat timeout: autonomous.heartbeat_timeout_seconds, 20 s by default. */
const ciActivities = (heartbeatSeconds = 20) =>
  proxyActivities<AutonomousOrchestrationActivities>({
    startToCloseTimeout: '3 hours',
    heartbeatTimeout: `${heartbeatSeconds} seconds`,
    retry: { initialInterval: '2 seconds', maximumAttempts: 3 },
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  });

/** The merge stage's CI evidence and fix validation (activities/autonomous/merge-stage.ts). */
const mergeActs = proxyActivities<AutonomousMergeStageActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 8 },
});

/** A queued or pending workflow looks again this often (a freed slot or a batch release wakes it sooner). */
const SCHEDULE_POLL = '5 seconds';
/** A failed workflow waits this long for a retry before its run ends (the API restarts it from the row). */
const FAILED_WAIT = '30 days';
const HISTORY_EVENTS_LIMIT = 10_000;
const MERGE_LOOP_LIMIT = 40;

/** How a phase ended: done, a trigger to apply, or cancelled by a control. */
type PhaseExit =
  | { kind: 'completed' }
  | { kind: 'trigger'; trigger: Trigger; fields?: TransitionFields }
  | { kind: 'cancelled' };

interface StepOk {
  ok: true;
  text: string;
  commit: { sha: string; files: number; additions: number; deletions: number } | null;
  skipped: boolean;
}
type StepResult = StepOk | { ok: false; exit: PhaseExit };

export interface AutonomousOutcome {
  workflow_id: string;
  status: string;
  phase: string;
}

const refuse = (reason: string) => ApplicationFailure.nonRetryable(reason, AUTONOMOUS_REFUSED);

export async function autonomousWorkflow(input: AutonomousInput): Promise<AutonomousOutcome> {
  const id = input.workflowId;
  const carried: AutonomousCarried = input.carried ?? {
    done: [],
    attempts: {},
    cursors: {},
    planningDeadline: null,
    repairedFingerprints: [],
  };
  // The handlers are registered before the first await, so an update that arrives while the row is
  // being read waits for it (instead of finding no handler); until then nothing is decided on `state`.
  let loaded = false;
  let ctx = {} as AutonomousContext;
  let state: WorkflowState = {
    status: 'pending',
    phase: 'preparation',
    pausedBy: null,
    previousStatus: null,
    feedbackPhase: null,
    inBatch: false,
  };
  const done = new Set(carried.done);
  let visit = 0;
  let woken = false;
  let quotaRestored = false;
  let phaseScope: CancellationScope | null = null;
  let deadlineMoved = 0;
  /** Bumped by every control that ends the running phase (see apply). */
  let phaseEpoch = 0;

  // ---- state changes, one at a time ------------------------------------------------------------
  let busy = false;
  const exclusive = async <T>(fn: () => Promise<T>): Promise<T> => {
    await condition(() => !busy);
    busy = true;
    try {
      return await fn();
    } finally {
      busy = false;
    }
  };

  const reload = async () => {
    const fresh = await acts.loadAutonomousContext({ workflowId: id });
    if (!fresh) {
      state = { ...state, status: 'cancelled' };
      return;
    }
    ctx = fresh;
    state = fresh.state;
  };

  interface EffectArgs {
    actor?: Actor;
    milestoneId?: number;
    feedback?: string;
    seconds?: number;
    note?: string | null;
  }

  /** Persists `trigger`'s transition and runs its effects; false when refused or the row moved. */
  async function apply(
    trigger: Trigger,
    args: EffectArgs = {},
    fields: TransitionFields = {},
  ): Promise<boolean> {
    const t = transition(state, trigger);
    if (!t.ok) return false;
    const effects = t.effects;
    const f: TransitionFields = { ...fields };
    if (effects.includes('start_planning_deadline')) {
      carried.planningDeadline = Date.now() + ctx.limits.planningTimeoutSeconds * 1000;
      f.planningDeadlineAt = carried.planningDeadline;
    }
    if (effects.includes('extend_planning_deadline')) {
      carried.planningDeadline = Date.now() + (args.seconds ?? ctx.limits.planningTimeoutSeconds) * 1000;
      f.planningDeadlineAt = carried.planningDeadline;
      f.timeoutContext = null;
      deadlineMoved++;
    }
    if (effects.includes('record_verified_by') && args.actor) {
      f.verifiedBy = args.actor.username;
      f.verified = true;
      f.verificationStatus = 'confirmed';
      f.manualOverrideContext = JSON.stringify({ by: args.actor.username, note: args.note ?? null });
    }
    if (t.next.status === 'paused' && state.status !== 'paused')
      f.pauseContext = JSON.stringify({
        reason: t.next.pausedBy,
        by: args.actor?.username ?? null,
        phase: state.phase,
      });
    if (t.next.status === 'planning_timeout')
      f.timeoutContext = JSON.stringify({ deadline: carried.planningDeadline });
    if (trigger.type === 'retry') f.retried = true;
    if (t.next.phase !== state.phase || (isRunning(t.next.status) && !isRunning(state.status)))
      f.phaseStarted = true;
    if (isRunning(t.next.status) && t.next.status !== state.status) f.error ??= null;
    const ok = await acts.persistAutonomousTransition({
      workflowId: id,
      expectedStatus: state.status,
      next: t.next,
      fields: f,
    });
    if (!ok) {
      await reload();
      return false;
    }
    // A control that ended the running phase (stop, cancel-round, done, timeout, pause for quota...):
    // whatever that phase run still reports afterwards is stale, even if the workflow is running the
    // same phase again by then (feedback right after a cancelled round).
    if (effects.includes('terminate_process') || t.next.status === 'waiting') phaseEpoch++;
    // Feedback is handed over before the new state is visible. The main loop waits on `state` and,
    // once it sees a running status, starts the phase at once: planning builds its prompt from
    // ctx.feedback in the same activation, development after one more activity (its round update).
    // The feedback used to join ctx.feedback only after its milestone row was written (an activity
    // awaited in runEffects, after `state = t.next`), so the next step could start without it: back
    // to planning whenever the loop was already idle waiting for the feedback, back to development
    // whenever the round update finished before the milestone write (1 end-to-end run in 3). Now the
    // text is in workflow memory in the same synchronous stretch as the state change; the row follows.
    if (effects.includes('store_feedback_milestone')) {
      visit++;
      ctx.feedback = [...ctx.feedback, args.feedback ?? ''];
    }
    state = t.next;
    await runEffects(effects, args);
    return true;
  }

  async function runEffects(effects: Effect[], args: EffectArgs) {
    for (const e of effects) {
      switch (e) {
        case 'terminate_process':
          phaseScope?.cancel();
          break;
        case 'cancel_later_batch_items':
          await acts.cancelLaterAutonomousBatchItems({ workflowId: id });
          break;
        case 'cancel_steps_after_milestone':
          if (args.milestoneId != null)
            await acts.cancelAutonomousMilestonesAfter({ workflowId: id, milestoneId: args.milestoneId });
          break;
        case 'store_feedback_milestone': // ctx.feedback and `visit` were moved on in apply
          await acts.recordAutonomousMilestone({
            workflowId: id,
            stepKey: `feedback:${visit}`,
            kind: 'feedback',
            phase: 'wait',
            title: `Feedback from ${args.actor?.username ?? 'the user'}`,
            content: args.feedback ?? '',
          });
          break;
        case 'cleanup_branch_and_worktree':
          await acts.cleanupAutonomousWorkspace({ workflowId: id });
          break;
        case 'close_session_lines':
          await acts.closeAutonomousSessionLines({ workflowId: id });
          break;
        case 'freeze_process': // the runner reads `paused` from the row and freezes the group
        case 'thaw_process': // ... and continues it when the status is running again
        case 'schedule_phase': // the main loop runs the phase of a running status
        case 'retry_step':
        case 'start_planning_deadline':
        case 'extend_planning_deadline':
        case 'record_verified_by':
        case 'schedule_auto_resume': // the 60 s quota schedule signals quotaRestored
          break;
        case 'close_issue': {
          // An issue requirement's issue is closed through the project's tracker with a comment; a
          // tracker failure does not undo the verdict: it is kept on the row's error.
          const closed = await acts.closeAutonomousIssue({
            workflowId: id,
            how: args.actor ? 'override' : 'confirmed',
          });
          if (!closed.closed && closed.reason.startsWith('the issue could not be closed'))
            await acts.updateAutonomousFields({ workflowId: id, fields: { error: closed.reason } });
          break;
        }
        default:
          assertExhaustive(e);
      }
    }
  }

  const result = (): ControlResult => ({
    workflow_id: id,
    status: state.status,
    phase: state.phase,
    paused_by: state.pausedBy,
  });

  // ---- controls ----------------------------------------------------------------------------------
  function control<A extends { actor: Actor }>(trigger: (a: A) => Trigger, check?: (a: A) => void) {
    return {
      validator: (a: A) => {
        check?.(a);
        // Decided by the handler, under the lock: before the row is read, or while a state change is
        // being written (the row may already show the new state that `state` does not yet).
        if (!loaded || busy) return;
        const t = transition(state, trigger(a));
        if (!t.ok) throw refuse(t.reason);
      },
      handler: async (a: A) =>
        condition(() => loaded).then(() =>
          exclusive(async () => {
            const tr = trigger(a);
            const t = transition(state, tr);
            if (!t.ok) throw refuse(t.reason);
            const extra = a as A & EffectArgs;
            if (!(await apply(tr, extra)))
              throw refuse(`the workflow changed meanwhile; it is ${state.status} now`);
            return result();
          }),
        ),
    };
  }
  const bind = <A extends { actor: Actor }>(
    def: Parameters<typeof setHandler>[0],
    c: { validator: (a: A) => void; handler: (a: A) => Promise<ControlResult> },
  ) => setHandler(def as any, c.handler as any, { validator: c.validator as any });

  bind(
    pauseUpdate,
    control(() => ({ type: 'pause' })),
  );
  bind(
    resumeUpdate,
    control(() => ({ type: 'resume' })),
  );
  bind(
    stopUpdate,
    control(() => ({ type: 'stop' })),
  );
  bind(
    retryUpdate,
    control(() => ({ type: 'retry' })),
  );
  bind(
    doneUpdate,
    control(() => ({ type: 'done' })),
  );
  bind(
    cancelRoundUpdate,
    control(
      (a: { actor: Actor; milestoneId: number; milestonePhase: string | null }) => ({
        type: 'cancel_round',
        milestonePhase: (a.milestonePhase ?? null) as LinearPhase | null,
      }),
      (a) => {
        if (!Number.isSafeInteger(a.milestoneId)) throw refuse('milestoneId must be an integer');
      },
    ),
  );
  bind(
    resumeWithFeedbackUpdate,
    control((a: { actor: Actor; feedback: string }) => ({
      type: 'resume_with_feedback',
      feedback: String(a.feedback ?? ''),
    })),
  );
  bind(
    extendPlanningTimeoutUpdate,
    control(
      () => ({ type: 'extend_planning_timeout' }),
      (a: { actor: Actor; seconds?: number }) => {
        if (
          a.seconds !== undefined &&
          (!Number.isSafeInteger(a.seconds) || a.seconds < 1 || a.seconds > 7 * 86_400)
        )
          throw refuse('seconds must be an integer from 1 to 604800');
      },
    ),
  );
  bind(
    verificationOverrideUpdate,
    control(() => ({ type: 'verification_override' })),
  );
  // Refused by its own state when not running (paused, waiting, finished): then nothing happens.
  setHandler(quotaExceededSignal, async () => {
    await condition(() => loaded);
    await exclusive(async () => {
      if (isRunning(state.status)) await apply({ type: 'app_quota_exceeded' });
    });
  });
  setHandler(quotaRestoredSignal, () => {
    quotaRestored = true;
  });
  setHandler(wakeSignal, () => {
    woken = true;
  });
  setHandler(stateQuery, () => state);

  // ---- steps -------------------------------------------------------------------------------------
  const facts = (extra: Partial<PromptFacts> = {}): PromptFacts => ({
    workflowId: id,
    requirement: ctx.requirement,
    round: visit + 1,
    plan: ctx.planText,
    feedback: ctx.feedback,
    ...extra,
  });
  const stepKey = (step: string) => `${state.phase}:${visit}:${step}`;
  /**
   * A manual pause holds the phase here between steps (a running CLI is frozen by the runner). A pause
   * by quota (the quota enforcement signal, which stops the running step) does not: the main loop waits
   * for quotaRestored in its `held` branch. Before that signal existed, a quota pause was applied only
   * after the phase ended, never while a checkpoint waited, so replayed histories do not change.
   */
  const checkpoint = () => condition(() => state.status !== 'paused' || state.pausedBy === 'quota');

  let runner: Runner | undefined;
  const cliRunner = () => {
    runner ??= proxyActivities<Runner>({
      startToCloseTimeout: `${ctx.limits.taskTimeoutSeconds + 600} seconds`,
      heartbeatTimeout: `${ctx.limits.heartbeatTimeoutSeconds ?? 15} seconds`,
      retry: { initialInterval: '2 seconds', maximumAttempts: 3 },
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    });
    return runner;
  };

  let ci: ReturnType<typeof ciActivities> | undefined;
  const ciRun = () => {
    ci ??= ciActivities(ctx.limits.heartbeatTimeoutSeconds);
    return ci;
  };

  const exitFor = (d: ReturnType<typeof decideAfterError>): PhaseExit | null => {
    if (d.kind === 'transition' || d.kind === 'fail_closed')
      return { kind: 'trigger', trigger: d.trigger, fields: { error: d.error } };
    return null;
  };

  /** One CLI step on its stable line: milestone begun, CLI run, changes committed, milestone finalized. */
  async function cliStep(
    kind: Exclude<MilestoneKind, 'feedback' | 'merge'>,
    prompt: string,
    opts: { commit?: boolean; key?: string; title?: string; cwd?: string; verifier?: boolean } = {},
  ): Promise<StepResult> {
    const key = stepKey(opts.key ?? kind);
    if (done.has(key)) return { ok: true, text: '', commit: null, skipped: true };
    const line = LINE_OF_KIND[kind]!;
    let firstFailureAt = 0;
    /** The last failure was a context overflow: the next run starts a fresh transcript (compact prompt). */
    let freshTranscript = false;
    /** Failures of this step per error class (each class counts its own attempts). */
    const failures: Partial<Record<AutonomousError['class'], number>> = {};
    for (;;) {
      await checkpoint();
      const attempt = (carried.attempts[key] ?? 0) + 1;
      carried.attempts[key] = attempt;
      const m = await acts.beginAutonomousMilestone({
        workflowId: id,
        stepKey: `${key}#${attempt}`,
        kind,
        phase: state.phase,
        title:
          opts.title ??
          (kind === 'acceptance_verification' ? 'Acceptance verification (running)' : kind.replace('_', ' ')),
        attempt,
        sessionLine: line,
      });
      let r: RunResult;
      try {
        r = await cliRunner().runAutonomousCli({
          workflowId: id,
          line,
          prompt,
          worktreePath: opts.cwd ?? ctx.worktreePath!,
          cliTool: ctx.cliTool,
          model: ctx.model,
          timeoutSeconds: ctx.limits.taskTimeoutSeconds,
          ...(carried.cursors[line] !== undefined ? { usageCursor: carried.cursors[line] } : {}),
          ...(freshTranscript ? { freshTranscript: true } : {}),
        });
      } catch (err) {
        // Stopped, or the runner gave up (its retries used): the step's row must not stay in progress.
        // (A row a cancelled round already marked `cancelled` is left as it is: finalize skips it.)
        const error = isCancellation(err) ? `the step was stopped (${state.status})` : failureMessage(err);
        await CancellationScope.nonCancellable(() =>
          acts.finishAutonomousMilestone({ workflowId: id, milestoneId: m.id, status: 'failed', error }),
        );
        throw err;
      }
      carried.cursors[line] = r.usageCursor;
      const usage = {
        totalTokens: r.usage.total,
        inputTokens: r.usage.input,
        outputTokens: r.usage.output,
        requestCount: r.usage.requests,
      };
      // A control that ended the step (stop, cancel-round, planning timeout) explains its failure better
      // than whatever the killed CLI said last.
      const stoppedBy = isRunning(state.status) ? null : state.status;
      const classified: AutonomousError | undefined = stoppedBy
        ? { class: 'cancelled' }
        : classifyStepResult(r);
      // The acceptance verifier's own infrastructure failures (the CLI failed, said nothing, timed out)
      // are verifier failures: 3 attempts, then paused for manual review (spec "Errors" 4).
      const err: AutonomousError | undefined =
        opts.verifier &&
        classified &&
        ['runner_failure', 'empty_output', 'transient_network', 'task_timeout'].includes(classified.class)
          ? { class: 'verifier_failure', kind: 'infrastructure' }
          : classified;
      let commit: StepOk['commit'] = null;
      let commitError: string | null = null;
      if (!err && opts.commit) {
        try {
          commit = await acts.commitAutonomousChanges({
            workflowId: id,
            message: `${kind.replace('_', ' ')}: ${ctx.title}`.slice(0, 200),
          });
        } catch (e) {
          if (isCancellation(e)) throw e; // a control ended the step: not a commit failure
          commitError = failureMessage(e);
        }
      }
      // Not cancellable: a stop that lands while the step ends must still finalize its row.
      await CancellationScope.nonCancellable(() =>
        acts.finishAutonomousMilestone({
          workflowId: id,
          milestoneId: m.id,
          status: err || commitError ? 'failed' : 'completed',
          outcome: milestoneOutcome({
            outcome: r.outcome,
            attemptOutcomes: (r.attempts ?? []).map((a) => a.outcome),
            // Steps whose point is a code change (a test round that changes nothing is fine).
            expectedCode:
              Boolean(opts.commit) && !commitError && (kind === 'implementation' || kind === 'ci_diagnosis'),
            committed: commit !== null,
          }),
          content: r.finalText,
          error:
            commitError ??
            (stoppedBy
              ? `the step was stopped (${stoppedBy})`
              : err
                ? `${err.class}${r.errorEnvelope ? `: ${r.errorEnvelope.message}` : ''}`.slice(0, 2000)
                : null),
          usage,
          commit,
        }),
      );
      if (commitError)
        return {
          ok: false,
          exit: { kind: 'trigger', trigger: { type: 'fail' }, fields: { error: commitError } },
        };
      if (!err) {
        done.add(key);
        return { ok: true, text: r.finalText, commit, skipped: false };
      }
      if (err.class === 'cancelled') return { ok: false, exit: { kind: 'cancelled' } };
      if (firstFailureAt === 0) firstFailureAt = Date.now();
      failures[err.class] = (failures[err.class] ?? 0) + 1;
      const d = decideAfterError(
        err,
        { failures: failures[err.class]!, elapsedSeconds: (Date.now() - firstFailureAt) / 1000 },
        ctx.limits.retry,
      );
      freshTranscript = d.kind === 'retry' && d.freshTranscript;
      const exit = exitFor(d);
      if (exit) return { ok: false, exit };
      if (d.kind === 'retry' || d.kind === 'wait') {
        if (d.delaySeconds > 0) await sleep(d.delaySeconds * 1000);
        continue;
      }
      return {
        ok: false,
        exit: {
          kind: 'trigger',
          trigger: { type: 'fail' },
          fields: { error: `${err.class}: the step failed` },
        },
      };
    }
  }

  // ---- phases ------------------------------------------------------------------------------------
  async function prepare(): Promise<void> {
    const initial =
      ctx.limits.retry?.preparationRetryInitialSeconds ?? DEFAULT_PREPARATION_RETRY_INITIAL_SECONDS;
    const ws = await slowActivities(initial).prepareAutonomousWorkspace({ workflowId: id });
    ctx.worktreePath = ws.worktreePath;
    await acts.ensureAutonomousSessionLines({ workflowId: id, cliTool: ctx.cliTool, model: ctx.model });
  }

  async function planning(): Promise<PhaseExit> {
    const plan = await cliStep('plan', stepPrompt('plan', facts()));
    if (!plan.ok) return plan.exit;
    if (!plan.skipped) ctx.planText = plan.text;
    const review = await cliStep('plan_review', stepPrompt('plan_review', facts()));
    if (!review.ok) return review.exit;
    return { kind: 'completed' };
  }

  async function development(): Promise<PhaseExit> {
    const round = visit + 1;
    if (ctx.round !== round) {
      ctx.round = round;
      await acts.updateAutonomousFields({ workflowId: id, fields: { developmentRound: round } });
    }
    const impl = await cliStep('implementation', stepPrompt('implementation', facts()), { commit: true });
    if (!impl.ok) return impl.exit;
    if (!impl.skipped && !impl.commit && ctx.prNumber == null && round === 1 && !ctx.forked)
      return {
        kind: 'trigger',
        trigger: { type: 'fail' },
        fields: { error: 'no_new_code: the agent changed no file' },
      };
    const test = await cliStep('test', stepPrompt('test', facts()), { commit: true });
    if (!test.ok) return test.exit;
    if (ctx.prNumber != null) await acts.pushAutonomousChanges({ workflowId: id });
    return { kind: 'completed' };
  }

  async function prReview(): Promise<PhaseExit> {
    if (ctx.prNumber == null) {
      const pr = await acts.openAutonomousPullRequest({
        workflowId: id,
        title: ctx.title,
        body: `${ctx.requirement}\n\n${ctx.planText ? `Plan:\n${ctx.planText}` : ''}`.slice(0, 60_000),
      });
      ctx.prNumber = pr.number;
    }
    const summary = await acts.autonomousChangeSummary({ workflowId: id });
    const review = await cliStep(
      'pr_review',
      stepPrompt('pr_review', facts({ prNumber: ctx.prNumber, changeSummary: summary })),
    );
    if (!review.ok) return review.exit;
    if (!review.skipped && parseVerdict(review.text, REVIEW_VERDICTS) === 'changes_requested') {
      const fix = await cliStep(
        'implementation',
        stepPrompt('implementation', facts({ reviewNotes: review.text, prNumber: ctx.prNumber })),
        { commit: true, key: 'pr-fix', title: 'PR review fixes' },
      );
      if (!fix.ok) return fix.exit;
      await acts.pushAutonomousChanges({ workflowId: id });
    }
    return { kind: 'completed' };
  }

  async function report(): Promise<PhaseExit> {
    const r = await cliStep('report', stepPrompt('report', facts({ prNumber: ctx.prNumber })));
    return r.ok ? { kind: 'completed' } : r.exit;
  }

  async function merge(): Promise<PhaseExit> {
    let refusal: { kind: import('../../domain/forge/merge-decision.ts').RefusalKind; reason: string } | null =
      null;
    let repairs = ctx.ciRepairAttempts;
    /** Reads of a failed check's log that held no usable evidence (spec: 6, then fail). */
    let evidencePolls = 0;
    for (let i = 0; i < MERGE_LOOP_LIMIT; i++) {
      await checkpoint();
      const { decision } = await acts.decideAutonomousMerge({
        workflowId: id,
        ctx: {
          refusal,
          repairedFingerprints: carried.repairedFingerprints,
          repairAttempts: repairs,
          maxRepairAttempts: ctx.limits.ciRepairAttempts,
        },
      });
      refusal = null;
      switch (decision.action) {
        case 'merge': {
          const m = await acts.mergeAutonomousPullRequest({
            workflowId: id,
            title: `Merge: ${ctx.title}`.slice(0, 200),
          });
          if (m.result.merged) {
            await acts.recordAutonomousMilestone({
              workflowId: id,
              stepKey: stepKey('merge'),
              kind: 'merge',
              phase: 'merge',
              title: `Merged pull request #${ctx.prNumber}`,
              content: `${m.result.method} merge ${m.result.sha}`,
              commitSha: m.result.sha,
            });
            return { kind: 'completed' };
          }
          refusal = m.refusal ?? null;
          break;
        }
        case 'requery':
          break;
        case 'sync_and_wait':
          await acts.syncAutonomousPullRequest({ workflowId: id });
          await ciRun().runAutonomousCi({ workflowId: id });
          break;
        case 'wait':
          await ciRun().runAutonomousCi({ workflowId: id });
          break;
        case 'ci_repair': {
          // The failed check's log is the repair's evidence. Without a usable one it is read again
          // later (no attempt consumed), LIMITS.ciLogDiagnosticsPolls times, then the workflow fails
          // with a permission hint (domain/autonomous/errors.ts ci_evidence_insufficient).
          const ev = await mergeActs.autonomousCiEvidence({ workflowId: id, unusableReads: evidencePolls });
          if (ev.evidence !== 'ok') {
            evidencePolls++;
            const d = decideAfterError(
              { class: 'ci_evidence_insufficient', reason: ev.evidence },
              { failures: evidencePolls, elapsedSeconds: 0 },
            );
            if (d.kind === 'transition')
              return { kind: 'trigger', trigger: d.trigger, fields: { error: d.error } };
            await sleep(Math.max(0.1, ev.pollSeconds) * 1000);
            break;
          }
          evidencePolls = 0;
          repairs++;
          const fresh = (decision.failing ?? []).flatMap((c) => (c.fingerprint ? [c.fingerprint] : []));
          carried.repairedFingerprints.push(...fresh);
          await acts.updateAutonomousFields({
            workflowId: id,
            fields: { ciRepairAttempts: repairs, newCiFailureFingerprints: fresh },
          });
          // Fix validation baseline: the remote PR head and its effective diff before the repair.
          const before = await mergeActs.autonomousCiFixBaseline({ workflowId: id });
          const fix = await cliStep(
            'ci_diagnosis',
            stepPrompt('ci_diagnosis', facts({ ciLog: ev.logTail, prNumber: ctx.prNumber })),
            {
              commit: true,
              key: `ci-repair-${repairs}`,
              title: `CI repair ${repairs}`,
            },
          );
          if (!fix.ok) return fix.exit;
          await acts.pushAutonomousChanges({ workflowId: id });
          // Only a new in-scope change of the effective PR diff is a fix (never a main-branch sync).
          const verdict = await mergeActs.validateAutonomousCiFix({ workflowId: id, before });
          if (!verdict.fixed)
            return {
              kind: 'trigger',
              trigger: { type: 'fail' },
              fields: { error: `ci_repair_not_a_fix: CI repair ${repairs} is not a fix: ${verdict.reason}` },
            };
          await ciRun().runAutonomousCi({ workflowId: id });
          break;
        }
        case 'resolve_conflict': {
          const begun = await acts.beginAutonomousConflictResolution({ workflowId: id });
          if (begun.status === 'conflict') {
            const fix = await cliStep(
              'conflict_repair',
              stepPrompt('conflict_repair', facts({ conflictFiles: begun.files, prNumber: ctx.prNumber })),
              { key: `conflict-${i}`, title: 'Conflict repair' },
            );
            if (!fix.ok) {
              await acts.abortAutonomousConflictResolution({ workflowId: id });
              return fix.exit;
            }
            await acts.completeAutonomousConflictResolution({ workflowId: id });
          }
          await acts.pushAutonomousChanges({ workflowId: id });
          await ciRun().runAutonomousCi({ workflowId: id });
          break;
        }
        case 'pause_for_rules':
          return {
            kind: 'trigger',
            trigger: { type: 'merge_refused_by_rules' },
            fields: { error: decision.reason },
          };
        case 'fail_visible':
          return {
            kind: 'trigger',
            // Rule 3 fails either because the attempts are used up or because a repaired failure came
            // back with the same fingerprint (not retried): only the first is "attempts exhausted".
            trigger:
              decision.rule === 3 && repairs >= ctx.limits.ciRepairAttempts
                ? { type: 'ci_repair_exhausted' }
                : { type: 'fail' },
            fields: { error: decision.reason },
          };
      }
    }
    return {
      kind: 'trigger',
      trigger: { type: 'fail' },
      fields: { error: `merge stage: no decision after ${MERGE_LOOP_LIMIT} rounds` },
    };
  }

  async function verification(): Promise<PhaseExit> {
    const dir = await acts.prepareAutonomousVerification({ workflowId: id });
    const attempts = (carried.attempts.verification ?? 0) + 1;
    carried.attempts.verification = attempts;
    // The verification attempt count is kept per verifier run by beginAutonomousMilestone.
    await acts.updateAutonomousFields({ workflowId: id, fields: { verificationStatus: 'running' } });
    // The acceptance snapshot now (the issue read again), compared with the hash taken at the start.
    const snapshot = await acts.autonomousAcceptanceSnapshot({ workflowId: id });
    const acceptance = {
      text: snapshot.text,
      source: snapshot.source,
      changedSinceStart: snapshot.changedSinceStart,
    };
    let unparsable = 0;
    for (let n = 0; ; n++) {
      const r = await cliStep(
        'acceptance_verification',
        stepPrompt('acceptance_verification', facts({ prNumber: ctx.prNumber, acceptance })),
        {
          cwd: dir,
          key: `verify-${attempts}-${n}`,
          verifier: true,
          ...(snapshot.changedSinceStart
            ? { title: 'Acceptance verification (running; the issue changed since the workflow started)' }
            : {}),
        },
      );
      if (!r.ok) {
        await acts.updateAutonomousFields({ workflowId: id, fields: { verificationStatus: 'failed' } });
        return r.exit;
      }
      const verdict = parseVerdict(r.text, ACCEPTANCE_VERDICTS);
      if (verdict) {
        await acts.updateAutonomousFields({ workflowId: id, fields: { verificationStatus: verdict } });
        return { kind: 'trigger', trigger: { type: 'verifier_verdict', verdict } };
      }
      // Unparsable verifier output: a deterministic failure, retried at most twice in all.
      unparsable++;
      const d = decideAfterError(
        { class: 'verifier_failure', kind: 'unparsable' },
        { failures: unparsable, elapsedSeconds: 0 },
      );
      if (d.kind === 'transition') {
        await acts.updateAutonomousFields({ workflowId: id, fields: { verificationStatus: 'unparsable' } });
        return { kind: 'trigger', trigger: d.trigger, fields: { error: d.error } };
      }
    }
  }

  let prepared = false;
  async function runPhase(): Promise<PhaseExit> {
    // The worktree is gone after the merge (cleaned up); the verifier gets its own checkout.
    if (state.phase === 'acceptance_verification')
      await acts.ensureAutonomousSessionLines({ workflowId: id, cliTool: ctx.cliTool, model: ctx.model });
    else if (!prepared || state.phase === 'preparation') await prepare();
    prepared = true;
    switch (state.phase) {
      case 'preparation':
        // The acceptance snapshot's hash, taken once at the start (an issue requirement's issue may
        // change while the work goes on; the verifier is told when it did).
        await acts.takeAutonomousAcceptanceSnapshot({ workflowId: id });
        return { kind: 'completed' };
      case 'planning':
        return planning();
      case 'development':
        return development();
      case 'pr_review':
        return prReview();
      case 'report':
        return report();
      case 'merge':
        return merge();
      case 'acceptance_verification':
        return verification();
      case 'wait':
        return { kind: 'cancelled' };
    }
  }

  /** Runs the current phase in a scope a control can cancel; the planning deadline watches it. */
  async function runPhaseScoped(): Promise<PhaseExit> {
    const scope = new CancellationScope({ cancellable: true });
    phaseScope = scope;
    let finished = false;
    const watchdog = state.phase === 'planning' ? planningWatchdog(() => finished) : Promise.resolve();
    try {
      return await scope.run(runPhase);
    } catch (err) {
      if (isCancellation(err) || scope.consideredCancelled) return { kind: 'cancelled' };
      return { kind: 'trigger', trigger: { type: 'fail' }, fields: { error: failureMessage(err) } };
    } finally {
      finished = true;
      phaseScope = null;
      await watchdog;
    }
  }

  async function planningWatchdog(over: () => boolean): Promise<void> {
    if (carried.planningDeadline == null) {
      carried.planningDeadline = Date.now() + ctx.limits.planningTimeoutSeconds * 1000;
      await acts.updateAutonomousFields({
        workflowId: id,
        fields: { planningDeadlineAt: carried.planningDeadline },
      });
    }
    while (!over() && state.status === 'planning') {
      const left = carried.planningDeadline! - Date.now();
      if (left <= 0) {
        await exclusive(() => apply({ type: 'planning_timeout' }));
        return;
      }
      const moved = deadlineMoved;
      await condition(() => over() || state.status !== 'planning' || deadlineMoved !== moved, left);
    }
  }

  // ---- the main loop -----------------------------------------------------------------------------
  async function schedule(): Promise<void> {
    if (state.status === 'queued') {
      await condition(() => woken, SCHEDULE_POLL);
      woken = false;
      await reload();
      return;
    }
    const t = transition(state, { type: 'start' });
    if (!t.ok) return;
    // Under the lock like every other state write: a control arriving meanwhile sees the result.
    const claim = await exclusive(async () => {
      if (state.status !== 'pending') return null;
      const c = await acts.claimAutonomousSlot({ workflowId: id, next: t.next });
      if (c.outcome === 'started') state = t.next;
      return c;
    });
    if (!claim) return;
    if (claim.outcome === 'started') {
      if (t.effects.includes('start_planning_deadline') && carried.planningDeadline == null) {
        carried.planningDeadline = Date.now() + ctx.limits.planningTimeoutSeconds * 1000;
        await acts.updateAutonomousFields({
          workflowId: id,
          fields: { planningDeadlineAt: carried.planningDeadline },
        });
      }
      return;
    }
    if (claim.outcome === 'not_pending') {
      await reload();
      return;
    }
    await condition(() => woken || state.status !== 'pending', SCHEDULE_POLL);
    woken = false;
  }

  /**
   * After the workflow stops holding a slot: wake other pending workflows and, once it is over (or
   * failed), release the next item of its batch (once per workflow).
   */
  async function releaseSlot(): Promise<void> {
    let next: string | null = null;
    if (isTerminal(state.status) && !carried.batchReleased) {
      carried.batchReleased = true;
      next = await acts.releaseNextAutonomousBatchItem({ workflowId: id });
    }
    const others = await acts.pendingAutonomousWorkflows({ except: id, limit: 3 });
    for (const other of [...(next ? [next] : []), ...others])
      await getExternalWorkflowHandle(temporalWorkflowId(other))
        .signal(wakeSignal)
        .catch(() => undefined);
  }

  const first = await acts.loadAutonomousContext({ workflowId: id });
  if (!first) {
    state = { ...state, status: 'cancelled' };
    loaded = true;
    await condition(() => allHandlersFinished() && !busy);
    return { workflow_id: id, status: 'deleted', phase: state.phase };
  }
  ctx = first;
  state = first.state;
  if (carried.planningDeadline == null && ctx.planningDeadlineAt != null)
    carried.planningDeadline = ctx.planningDeadlineAt;
  visit = ctx.feedback.length;
  loaded = true;

  for (;;) {
    if (state.status === 'completed' || state.status === 'cancelled') break;
    if (state.status === 'failed') {
      if (!carried.batchReleased) await releaseSlot();
      const changed = await condition(() => state.status !== 'failed', FAILED_WAIT);
      if (!changed) break;
      continue;
    }
    if (STATUS_CLASS[state.status] === 'scheduling') {
      await schedule();
      continue;
    }
    if (STATUS_CLASS[state.status] === 'held') {
      const seen = state;
      await condition(() => state !== seen || quotaRestored);
      if (quotaRestored) {
        quotaRestored = false;
        if (state.status === 'paused' && state.pausedBy === 'quota')
          await exclusive(() => apply({ type: 'quota_restored' }));
      }
      continue;
    }
    // A running status: work its phase.
    const phaseBefore = state.phase;
    const epoch = phaseEpoch;
    const exit = await runPhaseScoped();
    await checkpoint();
    await exclusive(async () => {
      // A control moved it meanwhile: this run's outcome is stale.
      if (!isRunning(state.status) || state.phase !== phaseBefore || phaseEpoch !== epoch) return;
      if (exit.kind === 'completed') {
        const wasSlot = isRunning(state.status);
        if (await apply({ type: 'phase_completed', acceptanceEnabled: ctx.limits.acceptanceEnabled })) {
          done.clear();
          if (wasSlot && isTerminal(state.status)) return;
        }
      } else if (exit.kind === 'trigger') {
        await apply(exit.trigger, {}, exit.fields ?? {});
      }
    });
    if (STATUS_CLASS[state.status] === 'held') await releaseSlot();
    if (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > HISTORY_EVENTS_LIMIT) {
      await condition(() => allHandlersFinished() && !busy);
      return continueAsNew<typeof autonomousWorkflow>({
        workflowId: id,
        carried: { ...carried, done: [...done] },
      });
    }
  }
  if (isTerminal(state.status)) await releaseSlot();
  await condition(() => allHandlersFinished() && !busy);
  return { workflow_id: id, status: state.status, phase: state.phase };
}

function failureMessage(err: unknown): string {
  let e: unknown = err;
  // ActivityFailure -> its cause (the ApplicationFailure the activity threw) carries the message.
  while (e && typeof e === 'object' && 'cause' in e && (e as { cause?: unknown }).cause)
    e = (e as { cause: unknown }).cause;
  const msg = e instanceof Error ? e.message : String(e);
  return msg.slice(0, 2000);
}
