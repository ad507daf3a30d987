// Fork at a milestone (spec document 2, "Autonomous development": "copy history before the fork point
// into a new workflow with its own worktree"; issue 13 item 8). The new workflow:
//   - has a new id, the source's owner, tenant, project, tool, model and definition snapshot (re-frozen
//     with `forkedFrom` set, no batch, branch strategy `worktree`: a fork always gets its own worktree);
//   - records forked_from_workflow_id / forked_from_milestone_id;
//   - starts from a copy of the source's milestones up to and including the fork milestone (same
//     sequence and usage, so its totals include that history: recomputed at once);
//   - resumes at feedbackReturnPhase(milestone.phase) (domain/autonomous/states.ts), status `pending`;
//   - is pinned to the commit of the latest milestone at or before the fork point that has one, else
//     to the source's baseline.
// A source that never started (queued/pending) has no history to fork: 409. If anything after the row
// was written fails (copy, Temporal start), the new row is deleted again (its milestones cascade), so
// a failed fork leaves nothing behind.
import type { DatabaseHandle } from '../../db/client.ts';
import { type MilestoneRow, milestonesRepository } from '../../db/repositories/autonomous/milestones.ts';
import { type WorkflowRow, workflowsRepository } from '../../db/repositories/autonomous/workflows.ts';
import { buildDefinitionSnapshot, parseDefinitionSnapshot } from '../../domain/autonomous/create-input.ts';
import { feedbackReturnPhase, isPhase, STATUS_CLASS } from '../../domain/autonomous/states.ts';
import { ConflictError } from '../../domain/errors.ts';
import { backgroundUnavailable } from '../temporal-unavailable.ts';
import { newAutonomousWorkflowId } from './create-workflows.ts';
import type { AutonomousRuns } from './temporal-runs.ts';

interface Deps {
  database: DatabaseHandle;
  runs: AutonomousRuns;
  now: () => Date;
}

/** The snapshot of the fork: the source's, re-frozen for a fork (or the source's text if unreadable). */
function forkSnapshot(source: WorkflowRow, milestoneId: number, now: Date): string {
  try {
    const s = parseDefinitionSnapshot(source.definitionSnapshot);
    return buildDefinitionSnapshot({
      requirement: s.requirement,
      project: s.project,
      cliTool: s.cliTool,
      model: s.model,
      branchStrategy: 'worktree',
      batch: null,
      forkedFrom: { workflowId: source.workflowId, milestoneId },
      createdAt: now,
    });
  } catch {
    return source.definitionSnapshot;
  }
}

/** The commit of the latest milestone at or before the fork point that has one. */
function forkBaseline(history: MilestoneRow[], target: MilestoneRow, fallback: string | null) {
  const upTo = history.filter((m) => (m.sequence ?? 0) <= (target.sequence ?? 0) && m.commitSha);
  upTo.sort((a, b) => (b.sequence ?? 0) - (a.sequence ?? 0));
  return upTo[0]?.commitSha ?? fallback;
}

export async function forkAutonomousWorkflow(
  deps: Deps,
  source: WorkflowRow,
  milestone: MilestoneRow,
): Promise<WorkflowRow> {
  if (STATUS_CLASS[source.status as keyof typeof STATUS_CLASS] === 'scheduling')
    throw new ConflictError(
      `cannot fork a workflow that is ${source.status}: it has not started yet, so it has no history`,
    );
  const workflows = workflowsRepository(deps.database);
  const milestones = milestonesRepository(deps.database);
  const now = deps.now();
  const workflowId = newAutonomousWorkflowId();
  const history = await milestones.list(source.workflowId);
  await workflows.create(
    {
      workflowId,
      tenantId: source.tenantId,
      userId: source.userId,
      title: source.title,
      projectId: source.projectId,
      projectPath: source.projectPath ?? '',
      cliTool: source.cliTool ?? '',
      model: source.model,
      branchStrategy: 'worktree',
      definitionSnapshot: forkSnapshot(source, milestone.id, now),
      forkedFromWorkflowId: source.workflowId,
      forkedFromMilestoneId: milestone.id,
    },
    now,
  );
  try {
    await workflows.update(
      workflowId,
      {
        currentPhase: feedbackReturnPhase(isPhase(milestone.phase) ? milestone.phase : null),
        baselineSha: forkBaseline(history, milestone, source.baselineSha),
      },
      now,
    );
    await milestones.copyHistory(source.workflowId, milestone.id, workflowId);
    await milestones.recomputeTotals(workflowId, now);
  } catch (err) {
    await workflows.delete(workflowId);
    throw err;
  }
  try {
    await deps.runs.start(workflowId);
  } catch {
    await workflows.delete(workflowId);
    throw backgroundUnavailable();
  }
  return (await workflows.find(workflowId))!;
}
