import { index, integer, pgTable, uniqueIndex } from 'drizzle-orm/pg-core';
import { bool, counter, createdAt, id, int, str, ts, txt, updatedAt } from './columns.ts';
import { tenants } from './identity.ts';

// Autonomous development records (spec document 2, "Autonomous workflow records", "Session lines").
// Tables introduced by 0005_autonomous_workflows; 0023_autonomous_engine adds the columns the engine
// needs (project, tool, model, branch strategy, baseline, deadlines, pause reason, milestone sequence
// and attempt), the batches and the four stable session lines of every workflow. Every column 0023
// adds is nullable or defaulted (expand only).

export const autonomousWorkflows = pgTable(
  'autonomous_workflows',
  {
    id: id(),
    workflowId: str('workflow_id', 64).notNull().unique(),
    tenantId: int('tenant_id'),
    userId: integer('user_id').notNull(),
    batchId: str('batch_id', 64),
    batchPosition: int('batch_position'),
    title: txt('title'),
    currentPhase: str('current_phase', 30).notNull().default('preparation'),
    status: str('status', 30).notNull().default('pending'),
    previousStatus: str('previous_status', 30),
    developmentRound: integer('development_round').notNull().default(0),
    error: txt('error'),
    projectPath: str('project_path', 500),
    branch: str('branch', 255),
    preferredWorktreePath: str('preferred_worktree_path', 500),
    prNumber: int('pr_number'),
    prUrl: txt('pr_url'),
    /** JSON text: requirement, tool, model, branch strategy and batch info frozen at creation. */
    definitionSnapshot: txt('definition_snapshot').notNull(),
    mainSessionId: str('main_session_id', 64),
    reviewSessionId: str('review_session_id', 64),
    testSessionId: str('test_session_id', 64),
    verificationSessionId: str('verification_session_id', 64),
    totalTokens: counter('total_tokens'),
    inputTokens: counter('input_tokens'),
    outputTokens: counter('output_tokens'),
    requestCount: counter('request_count'),
    ciRepairAttempts: integer('ci_repair_attempts').notNull().default(0),
    ciFailureFingerprints: txt('ci_failure_fingerprints'),
    ciDiagnosticsState: txt('ci_diagnostics_state'),
    verificationStatus: str('verification_status', 30),
    verificationAttempts: integer('verification_attempts').notNull().default(0),
    acceptanceSnapshotHash: str('acceptance_snapshot_hash', 128),
    manualOverrideContext: txt('manual_override_context'),
    verifiedBy: str('verified_by', 100),
    pauseContext: txt('pause_context'),
    timeoutContext: txt('timeout_context'),
    feedbackContext: txt('feedback_context'),
    resumeContext: txt('resume_context'),
    forkedFromWorkflowId: str('forked_from_workflow_id', 64),
    forkedFromMilestoneId: int('forked_from_milestone_id'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    completedAt: ts('completed_at'),
    // --- 0023_autonomous_engine ---
    /** The tenant-scoped `projects` row of `project_path` (services/autonomous/projects.ts). */
    projectId: int('project_id'),
    cliTool: str('cli_tool', 50),
    model: str('model', 100),
    /** worktree | new_branch | current_branch (domain/autonomous/create-input.ts). */
    branchStrategy: str('branch_strategy', 20),
    /** The origin/main commit the workflow (or its batch) is pinned to. */
    baselineSha: str('baseline_sha', 64),
    startedAt: ts('started_at'),
    phaseStartedAt: ts('phase_started_at'),
    /** Planning timeout (1800 s, extendable) as an absolute instant, so a restart keeps the deadline. */
    planningDeadlineAt: ts('planning_deadline_at'),
    /** Task timeout (AUTONOMOUS_TASK_TIMEOUT) as an absolute instant. */
    taskDeadlineAt: ts('task_deadline_at'),
    /** Why a `paused` workflow is paused: manual | quota | hard_quota | verification | repository_rules. */
    pausedBy: str('paused_by', 30),
    /** While `waiting`: the phase resume-with-feedback continues in (domain/autonomous/transitions.ts). */
    feedbackReturnPhase: str('feedback_return_phase', 30),
    /** Retry operations applied (failed / planning_timeout -> persisted phase). */
    retryCount: integer('retry_count').notNull().default(0),
    lastTransitionAt: ts('last_transition_at'),
    verifiedAt: ts('verified_at'),
  },
  (t) => [
    index('autonomous_workflows_user').on(t.userId),
    index('autonomous_workflows_batch').on(t.batchId),
    index('autonomous_workflows_tenant_status').on(t.tenantId, t.status),
    index('autonomous_workflows_project').on(t.projectId),
  ],
);

export const workflowMilestones = pgTable(
  'workflow_milestones',
  {
    id: id(),
    workflowId: str('workflow_id', 64)
      .notNull()
      .references(() => autonomousWorkflows.workflowId, { onDelete: 'cascade' }),
    kind: str('kind', 40).notNull(),
    title: txt('title'),
    status: str('status', 20).notNull().default('in_progress'),
    sessionLine: str('session_line', 20),
    sessionId: str('session_id', 64),
    content: txt('content'),
    commitSha: str('commit_sha', 64),
    diffAdditions: integer('diff_additions').notNull().default(0),
    diffDeletions: integer('diff_deletions').notNull().default(0),
    diffFiles: integer('diff_files').notNull().default(0),
    error: txt('error'),
    phaseTotalTokens: counter('phase_total_tokens'),
    phaseInputTokens: counter('phase_input_tokens'),
    phaseOutputTokens: counter('phase_output_tokens'),
    phaseRequestCount: counter('phase_request_count'),
    liveActivity: txt('live_activity'),
    isCancelled: bool('is_cancelled', false),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    finishedAt: ts('finished_at'),
    // --- 0023_autonomous_engine ---
    /** 1, 2, 3... per workflow, in the order the milestones were added (unique per workflow). */
    sequence: int('sequence'),
    /** The workflow phase the milestone belongs to (domain/autonomous/states.ts). */
    phase: str('phase', 30),
    /** 1 for the first try of a step; a retry of the same step gets the next attempt. */
    attempt: integer('attempt').notNull().default(1),
    startedAt: ts('started_at'),
    // --- 0029_milestone_step_key ---
    /**
     * The workflow's own key of the step that began this row (milestones.ts `begin`): a retried
     * activity finds its row instead of adding a second one. NULL for rows added without a key and
     * for history copied into a fork.
     */
    stepKey: str('step_key', 120),
    // --- 0033_milestone_outcome ---
    /**
     * How the step's run ended (spec "Errors" 4: runner failure, empty output, context overflow and
     * no-new-code are recorded separately): ok | runner_failure | empty_output | context_overflow |
     * context_overflow_recovered | no_new_code | timeout | cancelled. NULL for rows without a run.
     */
    outcome: str('outcome', 40),
  },
  (t) => [
    index('workflow_milestones_workflow').on(t.workflowId),
    uniqueIndex('workflow_milestones_sequence').on(t.workflowId, t.sequence),
    uniqueIndex('workflow_milestones_step_key').on(t.workflowId, t.stepKey),
  ],
);

/** A batch of workflows created together: one project, one shared baseline, items run one at a time. */
export const autonomousBatches = pgTable(
  'autonomous_batches',
  {
    id: id(),
    batchId: str('batch_id', 64).notNull().unique(),
    tenantId: int('tenant_id'),
    userId: integer('user_id').notNull(),
    projectId: int('project_id'),
    /** The origin/main commit every item starts from (set when the batch's first item prepares). */
    baselineSha: str('baseline_sha', 64),
    /** active | completed | cancelled */
    status: str('status', 20).notNull().default('active'),
    itemCount: integer('item_count').notNull().default(0),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('autonomous_batches_user').on(t.userId)],
);

/**
 * The four stable session lines of a workflow (`main`, `review`, `test`, `verification`): `session_id`
 * is ours and never changes; `provider_session_id` is the CLI's conversation id to resume, cleared on
 * context overflow and rebound to the new conversation; `proxy_token_id` is the jti of the line's own proxy token.
 */
export const autonomousSessionLines = pgTable(
  'autonomous_session_lines',
  {
    id: id(),
    workflowId: str('workflow_id', 64)
      .notNull()
      .references(() => autonomousWorkflows.workflowId, { onDelete: 'cascade' }),
    line: str('line', 20).notNull(),
    sessionId: str('session_id', 64).notNull(),
    providerSessionId: str('provider_session_id', 255),
    /** The jti of the line's current proxy token (proxy_tokens.jti; never the token itself). */
    proxyTokenId: str('proxy_token_id', 64),
    cliTool: str('cli_tool', 50),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('autonomous_session_lines_line').on(t.workflowId, t.line)],
);

/**
 * A tenant's autonomous settings (0034_tenant_autonomous; issue 25 item 2): which roles may run and
 * control workflows (comma-separated role names; readonly is never accepted and platform admins always
 * may: domain/autonomous/run-permission.ts), and the tenant's GitHub token as Fernet ciphertext only
 * (services/autonomous/tenant-settings.ts) with its last four characters as a hint. No row: defaults.
 */
export const tenantAutonomousSettings = pgTable('tenant_autonomous_settings', {
  tenantId: integer('tenant_id')
    .primaryKey()
    .references(() => tenants.id, { onDelete: 'cascade' }),
  runRoles: str('run_roles', 200).notNull().default('tenant_admin,manager,user'),
  githubTokenEncrypted: txt('github_token_encrypted'),
  githubTokenHint: str('github_token_hint', 8),
  updatedBy: int('updated_by'),
  updatedAt: updatedAt(),
});
