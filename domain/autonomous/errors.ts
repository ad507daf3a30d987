// Error classes of autonomous workflows and what each one does (spec document 2, "Errors" 4), pure.
//
// Classification (`classifyRunnerError`) reads only structured facts: the runner's outcome and exit
// code (services/autonomous/runner/outcome.ts), the launcher's integrity marker flag, and the
// zero-token error envelope a provider or our model proxy answered with (HTTP status, `type`, `code`;
// api/llm-proxy/proxy-error.ts). It never scans the CLI's normal text (a plan that says "quota" or
// "conflict" is not an error). Orchestrator steps (git, forge, CI, verifier) report their failures as
// an AutonomousError directly.
//
// Behaviour (`behaviourOf`, exhaustive over the classes: a new class cannot fall through):
//   transient_network      stay in phase, short fixed-delay retries, fail at the limit
//   transient_api          exponential backoff within 1800 s in total, then fail
//   provider_rate_limit    as transient_api, never a manual pause
//   hard_quota             paused (hard_quota): manual resume only
//   app_quota              paused (quota), fail closed: the 60 s quota schedule resumes it
//   context_overflow       retry on the same stable line with a fresh provider transcript and a
//                          compact prompt (the runner already did so once inside the run: a step
//                          that still overflows gets one more fresh run from the workflow, then fails)
//   ci_evidence_insufficient  wait for diagnosis (6 polls), then fail with a permission hint
//   repo_integrity_violation  fail closed: exit code 68, marker SVC_REPO_INTEGRITY_VIOLATION
//   verifier_failure       retry in the phase: 3 attempts (2 for deterministic parse failures), then
//                          paused (verification)
//   ci_cancelled           not a code failure: CI is run again, no repair attempt consumed
//   runner_failure, empty_output   recorded separately, retried in the phase like transient_network
//   task_timeout           the step failed (no retry: the same step would time out again)
//   no_new_code            recorded; the workflow decides (not an error of the run)
//   cancelled              the run was cancelled by a control: nothing to do
import { DEFAULT_RETRY_TIMING, LIMITS, type RetryTiming } from './limits.ts';
import { assertExhaustive } from './states.ts';
import type { Trigger } from './transitions.ts';

export type AutonomousError =
  | { class: 'transient_network'; source: 'network' | 'git' }
  | { class: 'transient_api'; httpStatus: number | null }
  | { class: 'provider_rate_limit' }
  | { class: 'hard_quota' }
  | { class: 'app_quota'; reason: 'exceeded' | 'check_failed' }
  | { class: 'context_overflow' }
  | { class: 'ci_evidence_insufficient'; reason: 'logs_not_ready' | 'no_permission' }
  | { class: 'repo_integrity_violation' }
  | { class: 'verifier_failure'; kind: 'infrastructure' | 'unparsable' }
  | { class: 'ci_cancelled' }
  | { class: 'runner_failure' }
  | { class: 'empty_output' }
  | { class: 'task_timeout' }
  | { class: 'no_new_code' }
  | { class: 'cancelled' };
export type ErrorClass = AutonomousError['class'];

export const INTEGRITY_EXIT_CODE = LIMITS.integrityExitCode;
export const INTEGRITY_MARKER = LIMITS.integrityMarker;

export type ErrorBehaviour =
  | {
      action: 'retry_in_phase';
      backoff: 'fixed' | 'exponential';
      /** Attempts in total (first try included); `undefined`: bounded by windowSeconds. */
      maxAttempts?: number;
      windowSeconds?: number;
      /** What happens when the retries are used up. */
      atLimit: 'fail' | 'pause_verification';
    }
  | { action: 'retry_fresh_transcript'; maxAttempts: number }
  | { action: 'pause'; pausedBy: 'hard_quota' | 'quota'; autoResume: boolean }
  | { action: 'wait_for_diagnosis'; maxPolls: number; atLimit: 'fail' }
  | { action: 'fail_closed'; exitCode: number; marker: string }
  | { action: 'rerun_ci' }
  | { action: 'fail' }
  | { action: 'record_only' };

export function behaviourOf(e: AutonomousError): ErrorBehaviour {
  switch (e.class) {
    case 'transient_network':
    case 'runner_failure':
    case 'empty_output':
      return {
        action: 'retry_in_phase',
        backoff: 'fixed',
        maxAttempts: LIMITS.transientNetworkAttempts,
        atLimit: 'fail',
      };
    case 'transient_api':
    case 'provider_rate_limit':
      return {
        action: 'retry_in_phase',
        backoff: 'exponential',
        windowSeconds: LIMITS.transientApiRetryWindowSeconds,
        atLimit: 'fail',
      };
    case 'hard_quota':
      return { action: 'pause', pausedBy: 'hard_quota', autoResume: false };
    case 'app_quota':
      return { action: 'pause', pausedBy: 'quota', autoResume: true };
    case 'context_overflow':
      return { action: 'retry_fresh_transcript', maxAttempts: LIMITS.contextOverflowWorkflowAttempts };
    case 'ci_evidence_insufficient':
      return { action: 'wait_for_diagnosis', maxPolls: LIMITS.ciLogDiagnosticsPolls, atLimit: 'fail' };
    case 'repo_integrity_violation':
      return { action: 'fail_closed', exitCode: INTEGRITY_EXIT_CODE, marker: INTEGRITY_MARKER };
    case 'verifier_failure':
      return {
        action: 'retry_in_phase',
        backoff: 'fixed',
        maxAttempts:
          e.kind === 'unparsable' ? LIMITS.verifierParseFailureMaxAttempts : LIMITS.verifierMaxAttempts,
        atLimit: 'pause_verification',
      };
    case 'ci_cancelled':
      return { action: 'rerun_ci' };
    case 'task_timeout':
      return { action: 'fail' };
    case 'no_new_code':
    case 'cancelled':
      return { action: 'record_only' };
    default:
      return assertExhaustive(e);
  }
}

/** Delay before retry number `attempt` (1 = the first retry) of an exponential-backoff class. */
export function apiBackoffSeconds(attempt: number): number {
  return backoffDelaySeconds(attempt, LIMITS.apiBackoffInitialSeconds);
}

/** The same with a configured first delay (factor and cap of one delay as in LIMITS). */
export function backoffDelaySeconds(attempt: number, initialSeconds: number): number {
  const raw = initialSeconds * LIMITS.apiBackoffFactor ** Math.max(0, attempt - 1);
  return Math.min(raw, LIMITS.apiBackoffMaxDelaySeconds);
}

export type ErrorDecision =
  /** Retry the step after `delaySeconds`; `freshTranscript`: clear the line's provider session first. */
  | { kind: 'retry'; delaySeconds: number; freshTranscript: boolean }
  /** Feed this trigger to transition() (pause, fail, verdict). */
  | { kind: 'transition'; trigger: Trigger; error: string }
  /** Poll for CI evidence again after `delaySeconds`. */
  | { kind: 'wait'; delaySeconds: number }
  /** Fail the workflow closed; the step must exit with `exitCode` and log `marker`. */
  | { kind: 'fail_closed'; trigger: Trigger; exitCode: number; marker: string; error: string }
  | { kind: 'rerun_ci' }
  | { kind: 'none' };

/**
 * What to do after `e`, given how many attempts of the step failed so far with this class (`failures`,
 * counting this one) and the seconds since the step's first failure (`elapsedSeconds`, for the
 * exponential window). `timing`: the configured delays and window (settings `autonomous.*`; the
 * spec's figures by default).
 */
export function decideAfterError(
  e: AutonomousError,
  progress: { failures: number; elapsedSeconds: number },
  timing: RetryTiming = DEFAULT_RETRY_TIMING,
): ErrorDecision {
  const b = behaviourOf(e);
  const fail = (error: string): ErrorDecision => ({ kind: 'transition', trigger: { type: 'fail' }, error });
  switch (b.action) {
    case 'retry_in_phase': {
      if (b.backoff === 'exponential') {
        const delay = backoffDelaySeconds(progress.failures, timing.apiBackoffInitialSeconds);
        const window = timing.apiRetryWindowSeconds;
        if (progress.elapsedSeconds + delay > window)
          return fail(`${e.class}: still failing after the ${window} s retry window`);
        return { kind: 'retry', delaySeconds: delay, freshTranscript: false };
      }
      if (progress.failures >= (b.maxAttempts ?? 1)) {
        if (b.atLimit === 'pause_verification')
          return {
            kind: 'transition',
            trigger: { type: 'verifier_verdict', verdict: 'retries_exhausted' },
            error: `${e.class}: ${b.maxAttempts} attempts failed`,
          };
        return fail(`${e.class}: ${b.maxAttempts} attempts failed`);
      }
      return { kind: 'retry', delaySeconds: timing.transientDelaySeconds, freshTranscript: false };
    }
    case 'retry_fresh_transcript':
      if (progress.failures >= b.maxAttempts)
        return fail(
          `${e.class}: the step overflowed the context window ${b.maxAttempts} times, also with a compact prompt on a fresh transcript`,
        );
      return { kind: 'retry', delaySeconds: 0, freshTranscript: true };
    case 'pause':
      return {
        kind: 'transition',
        trigger: { type: b.pausedBy === 'hard_quota' ? 'hard_quota_error' : 'app_quota_exceeded' },
        error:
          b.pausedBy === 'hard_quota'
            ? 'upstream hard quota exhausted'
            : 'application quota refused the call',
      };
    case 'wait_for_diagnosis': {
      if (progress.failures >= b.maxPolls) {
        const hint =
          e.class === 'ci_evidence_insufficient' && e.reason === 'no_permission'
            ? ': the service cannot read the CI logs (check the forge token permissions)'
            : ': the CI logs never held usable output (check that the CI writes its errors and that the service may read the logs: forge token permissions)';
        return fail(`insufficient CI evidence after ${b.maxPolls} polls${hint}`);
      }
      return { kind: 'wait', delaySeconds: 30 };
    }
    case 'fail_closed':
      return {
        kind: 'fail_closed',
        trigger: { type: 'fail' },
        exitCode: b.exitCode,
        marker: b.marker,
        error: `${b.marker}: Git metadata changed during the run; manual inspection required`,
      };
    case 'rerun_ci':
      return { kind: 'rerun_ci' };
    case 'fail':
      return fail(`${e.class}: the step failed`);
    case 'record_only':
      return { kind: 'none' };
    default:
      return assertExhaustive(b);
  }
}

/** Structured facts about a failed CLI run (services/autonomous/runner RunCliResult + envelope). */
export interface RunnerErrorFacts {
  /** The runner's outcome (services/autonomous/runner/outcome.ts RunOutcome). */
  outcome: 'ok' | 'runner_failure' | 'empty_output' | 'context_overflow' | 'timeout' | 'cancelled';
  exitCode: number | null;
  /** The launcher reported the integrity marker (a structured flag, set by the launcher itself). */
  integrityViolation?: boolean;
  /**
   * The zero-token error envelope of the failing model call, when there was one: the HTTP status and
   * the `error.type` / `error.code` fields of the provider's or our proxy's JSON error body.
   */
  envelope?: {
    httpStatus?: number | null;
    type?: string | null;
    code?: string | null;
    tokens?: number;
  } | null;
}

// Provider error codes of a hard (billing) quota: the provider will not serve until a person acts.
const HARD_QUOTA_CODES = new Set(['insufficient_quota', 'billing_hard_limit_reached', 'billing_not_active']);
// Provider rate-limit (allocation) codes: transient, never a manual pause.
const RATE_LIMIT_CODES = new Set(['rate_limit_exceeded', 'rate_limit_error', 'resource_exhausted']);
// Context window exceeded (the runner's own structured detection uses the same codes).
const CONTEXT_OVERFLOW_CODES = new Set(['context_length_exceeded', 'model_context_window_exceeded']);
const OVERLOADED_CODES = new Set(['overloaded_error', 'server_error', 'api_error', 'service_unavailable']);

function classifyEnvelope(env: NonNullable<RunnerErrorFacts['envelope']>): AutonomousError | undefined {
  // Only zero-token envelopes are error envelopes; a call that spent tokens answered.
  if ((env.tokens ?? 0) > 0) return undefined;
  const type = (env.type ?? '').toLowerCase();
  const code = (env.code ?? '').toLowerCase();
  const status = env.httpStatus ?? null;
  // Our own proxy's refusals (api/llm-proxy/proxy-error.ts) first: they are not the provider's.
  if (type === 'quota_exceeded') return { class: 'app_quota', reason: 'exceeded' };
  if (type === 'quota_check_failed') return { class: 'app_quota', reason: 'check_failed' };
  if (type === 'upstream_error') return { class: 'transient_api', httpStatus: status };
  if (HARD_QUOTA_CODES.has(code) || HARD_QUOTA_CODES.has(type)) return { class: 'hard_quota' };
  if (RATE_LIMIT_CODES.has(code) || RATE_LIMIT_CODES.has(type)) return { class: 'provider_rate_limit' };
  if (CONTEXT_OVERFLOW_CODES.has(code) || CONTEXT_OVERFLOW_CODES.has(type))
    return { class: 'context_overflow' };
  if (status === 429 || status === 529 || (status !== null && status >= 500 && status <= 599))
    return { class: 'transient_api', httpStatus: status };
  if (OVERLOADED_CODES.has(type) || OVERLOADED_CODES.has(code))
    return { class: 'transient_api', httpStatus: status };
  return undefined;
}

/** The error class of a CLI run, or undefined when the run succeeded. */
export function classifyRunnerError(f: RunnerErrorFacts): AutonomousError | undefined {
  if (f.integrityViolation || f.exitCode === INTEGRITY_EXIT_CODE)
    return { class: 'repo_integrity_violation' };
  switch (f.outcome) {
    case 'ok':
      return undefined;
    case 'cancelled':
      return { class: 'cancelled' };
    case 'timeout':
      return { class: 'task_timeout' };
    case 'context_overflow':
      return { class: 'context_overflow' };
    case 'runner_failure':
    case 'empty_output': {
      const fromEnvelope = f.envelope ? classifyEnvelope(f.envelope) : undefined;
      if (fromEnvelope) return fromEnvelope;
      return { class: f.outcome };
    }
    default:
      return assertExhaustive(f.outcome);
  }
}

/**
 * The error class of a runner step's result (services/autonomous/runner RunCliResult): the one mapping
 * the workflow uses. The envelope's structured `code` (a provider error code, or our proxy's
 * `quota_exceeded` / `quota_check_failed`) is read as both type and code; a failed step's envelope is
 * a zero-token one by construction (the runner reports spent tokens separately, in `usage`).
 */
export function classifyStepResult(r: {
  outcome: RunnerErrorFacts['outcome'];
  exitCode: number | null;
  errorEnvelope?: { code?: string | null } | null;
}): AutonomousError | undefined {
  const code = r.errorEnvelope?.code ?? null;
  return classifyRunnerError({
    outcome: r.outcome,
    exitCode: r.exitCode,
    envelope: r.errorEnvelope ? { httpStatus: null, type: code, code, tokens: 0 } : null,
  });
}
