// Shared setup of the autonomous API tests (test/integration/autonomous/api-*.test.ts): the real API
// on a real database and the test Temporal dev server, the cast of actors (test/support/actors.ts)
// plus a second plain user of tenant A, a Git project under the default project root
// (`<data dir>/projects`), and helpers to create workflows over HTTP and put rows into a state.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { milestonesRepository, type NewMilestone } from '../../../db/repositories/autonomous/milestones.ts';
import { tenantProjectRoot } from '../../../services/autonomous/projects.ts';
import { temporalWorkflowId } from '../../../workflows/autonomous/contract.ts';
import { makeGitRepo, type TempRepo } from '../../fixtures/git-repo.ts';
import { buildCast, type Cast, createUser, PASSWORD } from '../../support/actors.ts';
import { startTestApp, type TestApp } from '../../support/harness.ts';
import { api, login, type Session } from '../../support/session.ts';
import { FAKE_CLI_PATHS } from './runner-support.ts';

export interface ApiWorld {
  app: TestApp;
  cast: Cast;
  owner: Session;
  otherUser: Session;
  tenantAdmin: Session;
  otherTenantAdmin: Session;
  platformAdmin: Session;
  project: TempRepo;
  close(): Promise<void>;
}

export async function startApiWorld(opts: Parameters<typeof startTestApp>[0] = {}): Promise<ApiWorld> {
  // Every tool's CLI is the fake one (creation checks it is installed; no worker runs it here).
  const app = await startTestApp({
    ...opts,
    env: { SVC_AUTONOMOUS__CLI_PATHS: JSON.stringify(FAKE_CLI_PATHS), ...opts.env },
  });
  const cast = await buildCast(app);
  const other = await createUser(app, cast.admin, { role: 'user', tenant_id: cast.tenantA });
  // In tenant A's folder (services/autonomous/projects.ts): the owner's tenant.
  const root = path.join(
    tenantProjectRoot(path.join(app.settings.SVC_DATA_DIR, 'projects'), cast.tenantA),
    'app',
  );
  mkdirSync(root, { recursive: true });
  const project = makeGitRepo({ 'README.md': '# app\n', 'src/a.txt': 'one\ntwo\n' }, { root });
  return {
    app,
    cast,
    owner: cast.actors.user.session!,
    otherUser: await login(app.url, other.username, PASSWORD),
    tenantAdmin: cast.actors.tenant_admin.session!,
    otherTenantAdmin: cast.actors.other_tenant_admin.session!,
    platformAdmin: cast.admin,
    project,
    async close() {
      await app.close();
      project.cleanup();
    },
  };
}

/** POST /api/autonomous/workflows as `who`; returns the created workflow's body. */
export async function createWorkflow(w: ApiWorld, who: Session, body: Record<string, unknown> = {}) {
  const r = await api(w.app.url, 'POST', '/api/autonomous/workflows', {
    auth: who,
    body: { requirement: 'Add a --json flag', project_path: w.project.path, ...body },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body;
}

/** Sets columns of a workflow row directly (a state the engine would reach). */
export async function setRow(
  w: ApiWorld,
  workflowId: string,
  fields: Partial<(typeof w.app.database.t.autonomousWorkflows)['$inferInsert']>,
) {
  const { db, t } = w.app.database;
  await db.update(t.autonomousWorkflows).set(fields).where(eq(t.autonomousWorkflows.workflowId, workflowId));
}

export async function addMilestone(
  w: ApiWorld,
  workflowId: string,
  m: NewMilestone & {
    commitSha?: string;
    usage?: { totalTokens: number; inputTokens: number; outputTokens: number; requestCount: number };
  },
) {
  const repo = milestonesRepository(w.app.database);
  const row = await repo.add(workflowId, m);
  if (m.status === undefined || m.status === 'in_progress')
    await repo.finalize(row.id, {
      status: 'completed',
      ...(m.commitSha ? { commitSha: m.commitSha } : {}),
      ...(m.usage ? { usage: m.usage } : {}),
    });
  return row;
}

export async function workflowRow(w: ApiWorld, workflowId: string) {
  const { db, t } = w.app.database;
  const [row] = await db
    .select()
    .from(t.autonomousWorkflows)
    .where(eq(t.autonomousWorkflows.workflowId, workflowId));
  return row;
}

/** The Temporal run's status name (RUNNING, TERMINATED...), or null when there is none. */
export async function runStatus(w: ApiWorld, workflowId: string): Promise<string | null> {
  const client = await w.app.deps.temporal.client();
  try {
    const d = await client.workflow.getHandle(temporalWorkflowId(workflowId)).describe();
    return d.status.name;
  } catch {
    return null;
  }
}

/** Terminates any open run of these workflows (test clean-up: no worker will ever run them). */
export async function terminateRuns(w: ApiWorld, ids: string[]) {
  const client = await w.app.deps.temporal.client();
  for (const id of ids)
    await client.workflow
      .getHandle(temporalWorkflowId(id))
      .terminate('test over')
      .catch(() => undefined);
}
