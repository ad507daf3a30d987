// Creating autonomous workflows end to end below the HTTP edge (services/autonomous/create-workflows.ts)
// on a real migrated database (SQLite, or PostgreSQL with DATABASE_URL) and real Git repositories: one
// workflow with defaults, a batch (one transaction, first pending, rest queued, forced worktree, batch
// info frozen in every snapshot), and the refusals: a field error (400 naming it), a user without a
// tenant (403), a project outside the roots (400 naming the setting) -- none of which writes a row.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { type DatabaseHandle, openDatabase } from '../../../db/client.ts';
import { parseDefinitionSnapshot } from '../../../domain/autonomous/create-input.ts';
import { AppError } from '../../../domain/errors.ts';
import { upgrade } from '../../../migrations/runner.ts';
import { createAutonomousWorkflows } from '../../../services/autonomous/create-workflows.ts';
import { tenantProjectRoot } from '../../../services/autonomous/projects.ts';
import { makeGitRepo } from '../../fixtures/git-repo.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { FAKE_CLI_PATHS } from './runner-support.ts';

let testDb: TestDatabase;
let database: DatabaseHandle;
let tmp: string;
let app: string;
let secret: string;
let deps: Parameters<typeof createAutonomousWorkflows>[0];
const now = new Date('2026-04-01T08:00:00Z');
const alice = { id: 40, tenantId: 3 };

before(async () => {
  testDb = await createTestDatabase();
  database = await openDatabase({ databaseUrl: testDb.databaseUrl, sqlitePath: testDb.sqlitePath });
  await upgrade(database, 'head');
  tmp = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'svc-auto-create-')));
  const root = path.join(tmp, 'projects');
  mkdirSync(root);
  // alice's tenant folder (services/autonomous/projects.ts)
  app = makeGitRepo(
    { 'README.md': '# app\n' },
    { root: path.join(tenantProjectRoot(root, alice.tenantId), 'app') },
  ).path;
  secret = makeGitRepo({ 'README.md': '# s\n' }, { root: path.join(tmp, 'outside') }).path;
  deps = {
    database,
    settings: {
      SVC_DATA_DIR: tmp,
      SVC_AUTONOMOUS_PROJECT_ROOTS: root,
      autonomous: { default_cli_tool: 'cli_beta', cli_paths: FAKE_CLI_PATHS },
    },
    now: () => now,
  };
});
after(async () => {
  await database.close();
  await testDb.drop();
  rmSync(tmp, { recursive: true, force: true });
});

const countRows = async () => {
  const [w] = await database.sql.query<{ n: number }>('SELECT COUNT(*) AS n FROM autonomous_workflows');
  const [b] = await database.sql.query<{ n: number }>('SELECT COUNT(*) AS n FROM autonomous_batches');
  return [Number(w!.n), Number(b!.n)];
};

async function refusedWith(
  body: unknown,
  user: { id: number; tenantId: number | null },
  status: number,
  re: RegExp,
) {
  const before = await countRows();
  await assert.rejects(createAutonomousWorkflows(deps, user, body), (e: unknown) => {
    assert.ok(e instanceof AppError, String(e));
    assert.equal(e.status, status);
    assert.match(e.message, re);
    return true;
  });
  assert.deepEqual(await countRows(), before, 'nothing written');
}

test('one workflow: defaults (configured tool, worktree), project resolved, snapshot frozen', async () => {
  const r = await createAutonomousWorkflows(deps, alice, {
    requirement: 'Add a --json flag\nDetails...',
    project_path: app,
  });
  assert.equal(r.kind, 'single');
  if (r.kind !== 'single') return;
  const w = r.workflow;
  assert.match(w.workflowId, /^aw-[0-9a-f-]{36}$/);
  assert.equal(w.status, 'pending');
  assert.equal(w.tenantId, 3);
  assert.equal(w.userId, 40);
  assert.equal(w.title, 'Add a --json flag');
  assert.equal(w.cliTool, 'cli_beta');
  assert.equal(w.branchStrategy, 'worktree');
  assert.equal(w.projectPath, app);
  assert.equal(w.batchId, null);
  const s = parseDefinitionSnapshot(w.definitionSnapshot);
  assert.deepEqual(s.requirement, { kind: 'text', text: 'Add a --json flag\nDetails...' });
  assert.deepEqual(s.project, { id: w.projectId, path: app });
  assert.equal(s.batch, null);
  assert.equal(s.createdAt, now.toISOString());

  const again = await createAutonomousWorkflows(deps, alice, {
    requirement: 'https://git.example.com/acme/app/issues/7',
    project_path: `${app}/`,
    cli_tool: 'cli_gamma',
    model: 'gpt-5',
    branch_strategy: 'new_branch',
  });
  if (again.kind !== 'single') return assert.fail('single expected');
  assert.equal(again.workflow.projectId, w.projectId, 'the project row is reused');
  assert.equal(again.workflow.cliTool, 'cli_gamma');
  assert.equal(again.workflow.model, 'gpt-5');
  assert.equal(again.workflow.branchStrategy, 'new_branch');
  assert.equal(again.workflow.title, 'git.example.com issue #7');
});

test('a batch: one transaction, one project, first pending and the rest queued, batch info frozen', async () => {
  const r = await createAutonomousWorkflows(deps, alice, {
    items: [{ requirement: 'one' }, { requirement: '#2', cli_tool: 'cli_alpha' }, { requirement: 'three' }],
    project_path: app,
    model: 'm-1',
  });
  if (r.kind !== 'batch') return assert.fail('batch expected');
  assert.match(r.batch.batchId, /^ab-/);
  assert.equal(r.batch.itemCount, 3);
  assert.equal(r.batch.tenantId, 3);
  assert.deepEqual(
    r.workflows.map((w) => [w.batchPosition, w.status, w.branchStrategy, w.cliTool, w.model]),
    [
      [0, 'pending', 'worktree', 'cli_beta', 'm-1'],
      [1, 'queued', 'worktree', 'cli_alpha', 'm-1'],
      [2, 'queued', 'worktree', 'cli_beta', 'm-1'],
    ],
  );
  for (const [i, w] of r.workflows.entries()) {
    assert.equal(w.batchId, r.batch.batchId);
    assert.deepEqual(parseDefinitionSnapshot(w.definitionSnapshot).batch, {
      batchId: r.batch.batchId,
      position: i,
      count: 3,
    });
  }
});

test('refusals write nothing: field errors 400, no tenant 403, outside the roots 400', async () => {
  await refusedWith({ requirement: '', project_path: app }, alice, 400, /^requirement: /);
  await refusedWith({ requirement: 'x', project_path: app, cli_tool: 'sh' }, alice, 400, /^cli_tool: /);
  await refusedWith({ requirement: 'x', project_path: app, model: '$(id)' }, alice, 400, /^model: /);
  await refusedWith(
    { requirement: 'x', project_path: app, branch_strategy: 'force' },
    alice,
    400,
    /^branch_strategy: /,
  );
  await refusedWith(
    { items: [{ requirement: 'a' }, { requirement: '' }], project_path: app },
    alice,
    400,
    /^items\.1\.requirement: /,
  );
  await refusedWith(
    { requirement: 'x', project_path: app },
    { id: 41, tenantId: null },
    403,
    /tenant is required/,
  );
  await refusedWith({ requirement: 'x', project_path: secret }, alice, 400, /SVC_AUTONOMOUS_PROJECT_ROOTS/);
  await refusedWith(
    { requirement: 'x', project_path: `${app}/../../../../outside/project` },
    alice,
    400,
    /SVC_AUTONOMOUS_PROJECT_ROOTS/,
  );
  await refusedWith(
    { items: [{ requirement: 'a' }], project_path: secret },
    alice,
    400,
    /SVC_AUTONOMOUS_PROJECT_ROOTS/,
  );
  const badDefault = {
    ...deps,
    settings: {
      ...deps.settings,
      autonomous: { default_cli_tool: 'nonexistent', cli_paths: FAKE_CLI_PATHS },
    },
  };
  const projectsBefore = await database.sql.query('SELECT id FROM projects');
  const fresh = makeGitRepo(
    { 'a.txt': 'a\n' },
    { root: path.join(path.dirname(path.dirname(app)), 'fresh') },
  ).path;
  await assert.rejects(
    createAutonomousWorkflows(badDefault, alice, { requirement: 'x', project_path: fresh }),
    /cli_tool: required/,
  );
  assert.equal((await database.sql.query('SELECT id FROM projects')).length, projectsBefore.length);
});
