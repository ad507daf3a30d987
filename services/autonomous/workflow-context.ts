// What the autonomous Temporal workflow reads from the database when a run starts (a new workflow, a
// retry after its run ended, continue-as-new): the row's state and the facts its prompts need. The row
// is the durable record; the workflow's own memory only adds what the current run learned since.
// Serialisable and secret-free: it enters workflow history as an activity result.

import type { Settings } from '../../config/settings.ts';
import type { DatabaseHandle } from '../../db/client.ts';
import { milestonesRepository } from '../../db/repositories/autonomous/milestones.ts';
import { stateOf, workflowsRepository } from '../../db/repositories/autonomous/workflows.ts';
import { parseDefinitionSnapshot } from '../../domain/autonomous/create-input.ts';
import { autonomousLimits, retryTiming } from '../../domain/autonomous/limits.ts';
import { requirementText } from '../../domain/autonomous/prompts.ts';
import type { AutonomousContext } from '../../domain/autonomous/workflow-context.ts';

export async function loadAutonomousContext(
  deps: { database: DatabaseHandle; settings: Settings },
  workflowId: string,
): Promise<AutonomousContext | null> {
  const row = await workflowsRepository(deps.database).find(workflowId);
  if (!row) return null;
  const snapshot = parseDefinitionSnapshot(row.definitionSnapshot);
  const milestones = await milestonesRepository(deps.database).list(workflowId);
  const live = milestones.filter((m) => !m.isCancelled);
  const plan = live.filter((m) => m.kind === 'plan' && m.status === 'completed').at(-1);
  const limits = autonomousLimits(deps.settings);
  return {
    state: stateOf(row),
    requirement: requirementText(snapshot.requirement),
    title: row.title ?? workflowId,
    cliTool: row.cliTool ?? snapshot.cliTool,
    model: row.model ?? snapshot.model,
    batchId: row.batchId,
    forked: row.forkedFromWorkflowId != null,
    worktreePath: row.preferredWorktreePath,
    prNumber: row.prNumber,
    planText: plan?.content ?? null,
    feedback: live.filter((m) => m.kind === 'feedback' && m.content).map((m) => m.content!),
    round: row.developmentRound,
    ciRepairAttempts: row.ciRepairAttempts,
    planningDeadlineAt: row.planningDeadlineAt ? row.planningDeadlineAt.getTime() : null,
    limits: {
      acceptanceEnabled: limits.acceptanceVerificationEnabled,
      planningTimeoutSeconds: limits.planningTimeoutSeconds,
      taskTimeoutSeconds: limits.taskTimeoutSeconds,
      ciRepairAttempts: limits.ciRepairAttempts,
      retry: retryTiming(deps.settings),
      ...(deps.settings.autonomous.heartbeat_timeout_seconds !== undefined
        ? { heartbeatTimeoutSeconds: deps.settings.autonomous.heartbeat_timeout_seconds }
        : {}),
    },
  };
}
