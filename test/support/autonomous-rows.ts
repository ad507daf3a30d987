// Autonomous workflow rows for tests that need one in a given state without a Temporal workflow
// behind it (quota resume, quota enforcement): the creation input, and a row moved through triggers
// with the same compare-and-set the workflow uses.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { DatabaseHandle } from '../../db/client.ts';
import {
  type NewWorkflow,
  stateOf,
  workflowsRepository,
} from '../../db/repositories/autonomous/workflows.ts';
import { buildDefinitionSnapshot } from '../../domain/autonomous/create-input.ts';
import { type Trigger, transition } from '../../domain/autonomous/transitions.ts';

/** The creation input of a small text-requirement workflow of `userId` (in project `projectId`). */
export function newWorkflowInput(
  userId: number,
  tenantId: number | null,
  at = new Date(),
  projectId: number | null = null,
): NewWorkflow {
  return {
    workflowId: `wf-${randomUUID()}`,
    tenantId,
    userId,
    title: 'Add a flag',
    projectId,
    projectPath: '/srv/projects/demo',
    cliTool: 'cli_beta',
    model: null,
    branchStrategy: 'worktree',
    definitionSnapshot: buildDefinitionSnapshot({
      requirement: { kind: 'text', text: 'Add a flag' },
      project: { id: projectId ?? 1, path: '/srv/projects/demo' },
      cliTool: 'cli_beta',
      branchStrategy: 'worktree',
      createdAt: at,
    }),
  };
}

/** A workflow row of `userId` moved through `triggers`; its workflow_id. */
export async function workflowRowIn(
  database: DatabaseHandle,
  userId: number,
  tenantId: number | null,
  triggers: Trigger[],
): Promise<string> {
  const repo = workflowsRepository(database);
  const row = await repo.create(newWorkflowInput(userId, tenantId), new Date());
  let state = stateOf(row);
  for (const trigger of triggers) {
    const t = transition(state, trigger);
    assert.ok(t.ok, `${trigger.type} from ${state.status}`);
    assert.ok(await repo.updateStatus(row.workflowId, state.status, t.next));
    state = t.next;
  }
  return row.workflowId;
}
