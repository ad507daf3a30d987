// Every limit of autonomous development in one place (spec document 2, "Limits" and "Errors" 4). The
// configurable ones are read from settings here and nowhere else (config/settings.ts: the `autonomous`
// section, SVC_AUTONOMOUS_PROJECT_ROOTS, AUTONOMOUS_TASK_TIMEOUT, AUTONOMOUS_MAX_CHANGED_FILES); the
// fixed ones are constants. Pure: `autonomousLimits(settings)` only reads the object it is given, so
// the scheduler calls it again every cycle to pick up a changed setting. No Node imports: the Temporal
// workflow bundle may import this file. (The project roots are resolved in services/autonomous/projects.ts.)

/** Spec "Limits" figures (defaults of the configurable ones, and the fixed ones). */
export const LIMITS = {
  maxConcurrentWorkflows: 10,
  planningTimeoutSeconds: 1800,
  taskTimeoutSeconds: 3600,
  maxChangedFiles: 60,
  ciRepairAttempts: 5,
  ciLogDiagnosticsPolls: 6,
  preCommitConvergencePasses: 3,
  /** Transient API errors: exponential backoff within this window. */
  transientApiRetryWindowSeconds: 1800,
  /** Transient network / Git errors: short retries in the phase, then fail. */
  transientNetworkAttempts: 5,
  transientNetworkDelaySeconds: 5,
  /** Exponential backoff of transient API errors: first delay, factor, cap of one delay. */
  apiBackoffInitialSeconds: 10,
  apiBackoffFactor: 2,
  apiBackoffMaxDelaySeconds: 300,
  /**
   * Context overflow: runs of a step (each already retried once inside the runner with a compact
   * prompt on a fresh transcript) before the step fails.
   */
  contextOverflowWorkflowAttempts: 2,
  verifierMaxAttempts: 3,
  verifierParseFailureMaxAttempts: 2,
  quotaScheduleSeconds: 60,
  /** The SSE activity stream's visible keepalive. */
  streamKeepaliveSeconds: 30,
  batchMaxItems: 50,
  requirementMaxChars: 20_000,
  modelMaxChars: 100,
  /** Per-task resource limits when enabled. */
  taskMemoryBytes: 2_147_483_648,
  taskMaxProcesses: 512,
  taskCpuCores: 2,
  /** Repository integrity violation: the launcher's exit code and marker. */
  integrityExitCode: 68,
  integrityMarker: 'SVC_REPO_INTEGRITY_VIOLATION',
} as const;

export type CgroupMode = 'on' | 'auto' | 'off';

/** The part of Settings this file reads (structural, so domain/ imports nothing from config/). */
export interface AutonomousSettingsView {
  AUTONOMOUS_TASK_TIMEOUT: number;
  AUTONOMOUS_MAX_CHANGED_FILES: number;
  autonomous: {
    agent_max_concurrent_workflows?: number | undefined;
    max_concurrent_workflows?: number | undefined;
    acceptance_verification_enabled: boolean;
    planning_timeout_seconds: number;
    ci_repair_attempts: number;
    agent_task_cgroup_enabled: CgroupMode;
    transient_retry_delay_seconds?: number | undefined;
    api_backoff_initial_seconds?: number | undefined;
    transient_api_retry_window_seconds?: number | undefined;
    preparation_retry_initial_seconds?: number | undefined;
    heartbeat_timeout_seconds?: number | undefined;
  };
}

export interface AutonomousLimits {
  maxConcurrentWorkflows: number;
  acceptanceVerificationEnabled: boolean;
  planningTimeoutSeconds: number;
  taskTimeoutSeconds: number;
  maxChangedFiles: number;
  ciRepairAttempts: number;
  cgroup: CgroupMode;
}

/** The timing of in-phase retries (domain/autonomous/errors.ts decideAfterError). */
export interface RetryTiming {
  /** Fixed delay of short retries (transient network / Git, runner failures, verifier failures). */
  transientDelaySeconds: number;
  /** First delay of the exponential backoff of transient API errors (then x2, capped). */
  apiBackoffInitialSeconds: number;
  /** Total window of that backoff (spec "Limits": 1800 s). */
  apiRetryWindowSeconds: number;
  /**
   * First delay of the workspace preparation's activity retries (then x2, capped at 30 s). Optional:
   * a context carried from before the setting existed uses the default.
   */
  preparationRetryInitialSeconds?: number;
}

/** The preparation's first retry delay when the context does not carry one (the former constant). */
export const DEFAULT_PREPARATION_RETRY_INITIAL_SECONDS = 2;

export const DEFAULT_RETRY_TIMING: RetryTiming = {
  transientDelaySeconds: LIMITS.transientNetworkDelaySeconds,
  apiBackoffInitialSeconds: LIMITS.apiBackoffInitialSeconds,
  apiRetryWindowSeconds: LIMITS.transientApiRetryWindowSeconds,
  preparationRetryInitialSeconds: DEFAULT_PREPARATION_RETRY_INITIAL_SECONDS,
};

export function autonomousLimits(s: AutonomousSettingsView): AutonomousLimits {
  const a = s.autonomous;
  return {
    maxConcurrentWorkflows:
      a.agent_max_concurrent_workflows ?? a.max_concurrent_workflows ?? LIMITS.maxConcurrentWorkflows,
    acceptanceVerificationEnabled: a.acceptance_verification_enabled,
    planningTimeoutSeconds: a.planning_timeout_seconds,
    taskTimeoutSeconds: s.AUTONOMOUS_TASK_TIMEOUT,
    maxChangedFiles: s.AUTONOMOUS_MAX_CHANGED_FILES,
    ciRepairAttempts: a.ci_repair_attempts,
    cgroup: a.agent_task_cgroup_enabled,
  };
}

/** The retry timing the settings give (`autonomous.*`; the spec's figures by default). */
export function retryTiming(s: AutonomousSettingsView): RetryTiming {
  const a = s.autonomous;
  return {
    transientDelaySeconds: a.transient_retry_delay_seconds ?? DEFAULT_RETRY_TIMING.transientDelaySeconds,
    apiBackoffInitialSeconds: a.api_backoff_initial_seconds ?? DEFAULT_RETRY_TIMING.apiBackoffInitialSeconds,
    apiRetryWindowSeconds: a.transient_api_retry_window_seconds ?? DEFAULT_RETRY_TIMING.apiRetryWindowSeconds,
    preparationRetryInitialSeconds:
      a.preparation_retry_initial_seconds ?? DEFAULT_PREPARATION_RETRY_INITIAL_SECONDS,
  };
}
