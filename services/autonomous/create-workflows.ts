// Creating autonomous workflows (issue 13 item 7): the one path from a request body to stored rows,
// for the POST /api/autonomous/workflows handler (and forks) to call. In order:
//   1. the body is parsed (domain/autonomous/create-input.ts: 400 naming the field);
//   2. the caller must belong to a tenant (projects are tenant-scoped; 403 otherwise);
//   3. the CLI of every item must be installed on this machine (cli-check.ts: 400 naming the CLI and
//      how to install it);
//   4. project_path is confined to the tenant's folder under SVC_AUTONOMOUS_PROJECT_ROOTS and its
//      project row created or reused (services/autonomous/projects.ts: 400 naming the setting, 403 for
//      another tenant's folder);
//   5. each workflow gets a fresh id, a title and its frozen definition_snapshot, and the workflow (or
//      the batch with all its items) is written in one transaction (first item `pending`, the rest
//      `queued`).
// Starting the Temporal workflows (`autonomous-<id>`) is the caller's next step; nothing here holds a
// secret, so the rows and snapshots may be returned as they are.
import { randomUUID } from 'node:crypto';
import type { Settings } from '../../config/settings.ts';
import type { DatabaseHandle } from '../../db/client.ts';
import {
  type BatchRow,
  type WorkflowRow,
  workflowsRepository,
} from '../../db/repositories/autonomous/workflows.ts';
import {
  AUTONOMOUS_CLI_TOOLS,
  buildDefinitionSnapshot,
  type CreateItem,
  parseCreateInput,
  requirementTitle,
} from '../../domain/autonomous/create-input.ts';
import { BadRequestError, ForbiddenError } from '../../domain/errors.ts';
import { assertAutonomousCliInstalled } from './cli-check.ts';
import { ensureAutonomousProject } from './projects.ts';

export type CreateResult =
  | { kind: 'single'; workflow: WorkflowRow }
  | { kind: 'batch'; batch: BatchRow; workflows: WorkflowRow[] };

type Deps = {
  database: DatabaseHandle;
  settings: Pick<Settings, 'SVC_DATA_DIR' | 'SVC_AUTONOMOUS_PROJECT_ROOTS'> & {
    autonomous: Pick<Settings['autonomous'], 'default_cli_tool' | 'cli_paths'>;
  };
  now: () => Date;
};

export const newAutonomousWorkflowId = () => `aw-${randomUUID()}`;
export const newAutonomousBatchId = () => `ab-${randomUUID()}`;

function toolOf(item: CreateItem, fallback: string): string {
  if (item.cliTool) return item.cliTool;
  if ((AUTONOMOUS_CLI_TOOLS as readonly string[]).includes(fallback)) return fallback;
  throw new BadRequestError(
    `cli_tool: required (the configured autonomous.default_cli_tool is not a known tool)`,
  );
}

export async function createAutonomousWorkflows(
  deps: Deps,
  user: { id: number; tenantId: number | null },
  body: unknown,
): Promise<CreateResult> {
  const input = parseCreateInput(body);
  if (user.tenantId == null)
    throw new ForbiddenError('A tenant is required to create an autonomous workflow');
  const fallback = deps.settings.autonomous.default_cli_tool;
  const tools = new Set(
    (input.kind === 'single' ? [input.item] : input.items).map((i) => toolOf(i, fallback)),
  );
  // Before anything is written or started: a CLI that is not installed would only fail every attempt.
  for (const tool of tools) assertAutonomousCliInstalled(deps.settings, tool);
  const project = await ensureAutonomousProject(
    deps,
    { tenantId: user.tenantId, userId: user.id },
    input.projectPath,
  );
  const now = deps.now();
  const repo = workflowsRepository(deps.database);
  const newItem = (item: CreateItem, batch: { batchId: string; position: number; count: number } | null) => {
    const cliTool = toolOf(item, fallback);
    const branchStrategy = input.kind === 'batch' ? 'worktree' : input.branchStrategy;
    return {
      workflowId: newAutonomousWorkflowId(),
      tenantId: user.tenantId,
      userId: user.id,
      title: requirementTitle(item.requirement),
      projectId: project.projectId,
      projectPath: project.path,
      cliTool,
      model: item.model ?? null,
      branchStrategy,
      definitionSnapshot: buildDefinitionSnapshot({
        requirement: item.requirement,
        project: { id: project.projectId, path: project.path },
        cliTool,
        model: item.model ?? null,
        branchStrategy,
        batch,
        createdAt: now,
      }),
    };
  };
  if (input.kind === 'single')
    return { kind: 'single', workflow: await repo.create(newItem(input.item, null), now) };
  const batchId = newAutonomousBatchId();
  const count = input.items.length;
  const { batch, workflows } = await repo.createBatch(
    {
      batchId,
      tenantId: user.tenantId,
      userId: user.id,
      projectId: project.projectId,
      items: input.items.map((item, position) => newItem(item, { batchId, position, count })),
    },
    now,
  );
  return { kind: 'batch', batch, workflows };
}
