// project_path confinement for autonomous workflows (services/autonomous/projects.ts) with real Git
// repositories in temp directories and a real migrated database (SQLite, or PostgreSQL with
// DATABASE_URL): inside the tenant's folder of a root (`<root>/tenant-<id>`) is accepted and its tenant
// project reused; outside the roots, `..` traversal, a symlink escaping the root, a directory that is
// not a Git work tree (or only sits in a checkout enclosing the root), the root itself, missing or
// relative paths all answer the same 400 naming SVC_AUTONOMOUS_PROJECT_ROOTS; another tenant's folder
// answers 403 before anything in it is read (issue 25 item 2).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { type DatabaseHandle, openDatabase } from '../../../db/client.ts';
import { BadRequestError, ForbiddenError } from '../../../domain/errors.ts';
import { upgrade } from '../../../migrations/runner.ts';
import {
  ensureAutonomousProject,
  OTHER_TENANT_PROJECT_ERROR,
  PROJECT_PATH_ERROR,
  projectRoots,
  resolveProjectPath as resolveFor,
  tenantProjectRoot,
} from '../../../services/autonomous/projects.ts';
import { gitIn, makeGitRepo } from '../../fixtures/git-repo.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';

let testDb: TestDatabase;
let database: DatabaseHandle;
let tmp: string;
let rootA: string;
let rootB: string;
let outside: string;
let settings: { SVC_DATA_DIR: string; SVC_AUTONOMOUS_PROJECT_ROOTS: string };
let app: string;
let lib: string;
let secret: string;
let foreign: string;

/** Tenant 1 is the caller of every check but the cross-tenant ones. */
const resolveProjectPath = (s: typeof settings, p: string) => resolveFor(s, 1, p);

/** A real repository with one commit; returns its work tree (`<dir>/project`). */
const repo = (dir: string, files: Record<string, string>) => makeGitRepo(files, { root: dir }).path;

before(async () => {
  testDb = await createTestDatabase();
  database = await openDatabase({ databaseUrl: testDb.databaseUrl, sqlitePath: testDb.sqlitePath });
  await upgrade(database, 'head');
  tmp = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'svc-auto-projects-')));
  rootA = path.join(tmp, 'rootA');
  rootB = path.join(tmp, 'rootB');
  outside = path.join(tmp, 'outside');
  for (const d of [rootA, rootB, outside]) mkdirSync(d);
  settings = {
    SVC_DATA_DIR: path.join(tmp, 'data'),
    SVC_AUTONOMOUS_PROJECT_ROOTS: [rootA, rootB].join(path.delimiter),
  };
  app = repo(path.join(tenantProjectRoot(rootA, 1), 'app'), {
    'README.md': '# app\n',
    'src/index.js': 'x\n',
  });
  lib = repo(path.join(tenantProjectRoot(rootB, 1), 'lib'), { 'README.md': '# lib\n' });
  secret = repo(path.join(outside, 'secret'), { 'README.md': '# secret\n' });
  foreign = repo(path.join(tenantProjectRoot(rootA, 2), 'app'), { 'README.md': '# theirs\n' });
  mkdirSync(path.join(tenantProjectRoot(rootA, 1), 'plain'));
});
after(async () => {
  await database.close();
  await testDb.drop();
  rmSync(tmp, { recursive: true, force: true });
});

async function refused(p: string, s: typeof settings = settings) {
  await assert.rejects(resolveProjectPath(s, p), (e: unknown) => {
    assert.ok(e instanceof BadRequestError);
    assert.equal(e.status, 400);
    assert.equal(e.message, PROJECT_PATH_ERROR);
    assert.match(e.message, /SVC_AUTONOMOUS_PROJECT_ROOTS/);
    return true;
  });
}

test('roots: the path list of the setting, default <data dir>/projects', () => {
  assert.deepEqual(projectRoots(settings), [rootA, rootB]);
  assert.deepEqual(
    projectRoots({
      SVC_DATA_DIR: '/var/lib/svc',
      SVC_AUTONOMOUS_PROJECT_ROOTS: undefined as unknown as string,
    }),
    ['/var/lib/svc/projects'],
  );
});

test('a Git repository inside a root is accepted (any root); a subdirectory resolves to its top level', async () => {
  assert.equal(await resolveProjectPath(settings, app), app);
  assert.equal(await resolveProjectPath(settings, lib), lib);
  assert.equal(await resolveProjectPath(settings, path.join(app, 'src')), app);
  assert.equal(await resolveProjectPath(settings, `${app}/`), app);
  // `..` that stays inside the root is fine: the resolved path decides
  assert.equal(await resolveProjectPath(settings, `${rootA}/tenant-1/plain/../app/project`), app);
});

test('outside the roots, `..` traversal and symlinks escaping the root: 400', async () => {
  await refused(secret);
  await refused(`${rootA}/../outside/secret/project`);
  await refused(`${app}/../../../../outside/secret/project`);
  const own = tenantProjectRoot(rootA, 1);
  symlinkSync(secret, path.join(own, 'escape'));
  await refused(path.join(own, 'escape'));
  await refused(path.join(own, 'escape', 'README.md'));
  // a link inside a root to a repository in another root is fine: the resolved path decides
  symlinkSync(lib, path.join(own, 'lib-link'));
  assert.equal(await resolveProjectPath(settings, path.join(own, 'lib-link')), lib);
  // the default root (<data dir>/projects) when the setting is unset: rootA is not it
  await refused(app, { SVC_DATA_DIR: path.join(tmp, 'data'), SVC_AUTONOMOUS_PROJECT_ROOTS: '' });
});

test('not a Git work tree, the root itself, missing, relative or odd paths: 400', async () => {
  await refused(path.join(tenantProjectRoot(rootA, 1), 'plain'));
  await refused(rootA);
  await refused(tenantProjectRoot(rootA, 1));
  await refused(path.join(tenantProjectRoot(rootA, 1), 'missing'));
  await refused('app');
  await refused('');
  await refused(`${rootA}/app\0`);
  await refused(path.join(app, 'README.md'));
  // the root inside a checkout: a directory in it is only in the enclosing work tree
  const enclosing = repo(path.join(tmp, 'enclosing'), { 'a.txt': 'a\n' });
  const enclosedTenant = tenantProjectRoot(path.join(enclosing, 'projects'), 1);
  mkdirSync(path.join(enclosedTenant, 'inner'), { recursive: true });
  const s = { SVC_DATA_DIR: tmp, SVC_AUTONOMOUS_PROJECT_ROOTS: path.join(enclosing, 'projects') };
  await refused(path.join(enclosedTenant, 'inner'), s);
  // ... while a real repository in there is fine
  const nested = repo(path.join(enclosedTenant, 'repo'), { 'b.txt': 'b\n' });
  assert.equal(await resolveProjectPath(s, nested), nested);
  // a bare repository has no work tree
  const bare = path.join(tenantProjectRoot(rootA, 1), 'bare.git');
  mkdirSync(bare);
  gitIn(bare, 'init', '--bare', '-q');
  await refused(bare);
});

test('the project row is created once per tenant and path, reused, with the user_projects row', async () => {
  const a = await ensureAutonomousProject({ database, settings }, { tenantId: 1, userId: 10 }, app);
  const b = await ensureAutonomousProject(
    { database, settings },
    { tenantId: 1, userId: 11 },
    path.join(app, 'src'),
  );
  const c = await ensureAutonomousProject({ database, settings }, { tenantId: 1, userId: 10 }, app);
  assert.equal(a.path, app);
  assert.equal(a.projectId, b.projectId);
  assert.equal(a.projectId, c.projectId);
  // tenant 2 cannot use tenant 1's repository; its own in its folder is its own project
  await assert.rejects(
    ensureAutonomousProject({ database, settings }, { tenantId: 2, userId: 20 }, app),
    (e: unknown) => e instanceof ForbiddenError && e.message === OTHER_TENANT_PROJECT_ERROR,
  );
  const other = await ensureAutonomousProject({ database, settings }, { tenantId: 2, userId: 20 }, foreign);
  assert.notEqual(other.projectId, a.projectId, 'projects are tenant-scoped');
  const rows = await database.sql.query<{
    tenant_id: number;
    path: string;
    name: string;
    created_by: number;
  }>('SELECT tenant_id, path, name, created_by FROM projects WHERE path IN (?, ?) ORDER BY tenant_id', [
    app,
    foreign,
  ]);
  assert.deepEqual(
    rows.map((r) => [Number(r.tenant_id), r.path, r.name, Number(r.created_by)]),
    [
      [1, app, 'project', 10],
      [2, foreign, 'project', 20],
    ],
  );
  const up = await database.sql.query<{ user_id: number; project_id: number }>(
    'SELECT user_id, project_id FROM user_projects WHERE project_id IN (?, ?) ORDER BY user_id',
    [a.projectId, other.projectId],
  );
  assert.deepEqual(
    up.map((r) => [Number(r.user_id), Number(r.project_id)]),
    [
      [10, a.projectId],
      [11, a.projectId],
      [20, other.projectId],
    ],
  );
  await assert.rejects(
    ensureAutonomousProject({ database, settings }, { tenantId: 1, userId: 10 }, secret),
    (e: unknown) => e instanceof BadRequestError && e.message === PROJECT_PATH_ERROR,
  );
  const none = await database.sql.query('SELECT id FROM projects WHERE path LIKE ?', [`${outside}%`]);
  assert.equal(none.length, 0, 'no project row for a refused path');
});

test("another tenant's folder: 403 on the path as given, before anything in it is read", async () => {
  const forbidden = async (tenantId: number, p: string) =>
    assert.rejects(resolveFor(settings, tenantId, p), (e: unknown) => {
      assert.ok(e instanceof ForbiddenError, String(e));
      assert.equal(e.status, 403);
      assert.equal(e.message, OTHER_TENANT_PROJECT_ERROR);
      return true;
    });
  // tenant 1 at tenant 2's repository, and tenant 2 at tenant 1's (every form of the path)
  await forbidden(1, foreign);
  await forbidden(1, path.join(foreign, 'README.md'));
  await forbidden(1, `${tenantProjectRoot(rootA, 1)}/../tenant-2/app/project`);
  await forbidden(2, app);
  await forbidden(2, lib);
  // the same answer whether anything is there or not, Git or not (no existence probe, no git run)
  await forbidden(1, path.join(tenantProjectRoot(rootA, 2), 'no-such-repo'));
  await forbidden(1, path.join(rootA, 'tenant-3', 'whatever'));
  await forbidden(1, path.join(rootA, 'loose-repo'));
  // a symlink in one's own folder that leads into another tenant's folder
  symlinkSync(foreign, path.join(tenantProjectRoot(rootA, 1), 'foreign-link'));
  await forbidden(1, path.join(tenantProjectRoot(rootA, 1), 'foreign-link'));
  // a symlink outside the roots leading into another tenant's folder
  symlinkSync(foreign, path.join(outside, 'foreign-link'));
  await forbidden(1, path.join(outside, 'foreign-link'));
  // tenant 2 uses its own
  assert.equal(await resolveFor(settings, 2, foreign), foreign);
});
