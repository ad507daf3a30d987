// Who may run what (issue 25 item 2), over real HTTP against the real app, stopping before any workflow
// runs (no worker): creating and controlling autonomous workflows needs the tenant's permission to run
// them (readonly never; a tenant admin restricts the roles per tenant through GET/PUT
// /api/tenants/:id/autonomous, audited; platform admins always), reads stay owner-or-admin; a project
// path in another tenant's folder answers 403 and nothing of it is touched; the tenant's GitHub token
// is write-only in the API.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { NotFoundError } from '../../../domain/errors.ts';
import { OTHER_TENANT_PROJECT_ERROR, tenantProjectRoot } from '../../../services/autonomous/projects.ts';
import { autonomousWorkspace } from '../../../services/autonomous/workspace.ts';
import { makeGitRepo, type TempRepo } from '../../fixtures/git-repo.ts';
import { createUser, PASSWORD } from '../../support/actors.ts';
import { api, login, type Session } from '../../support/session.ts';
import {
  type ApiWorld,
  addMilestone,
  createWorkflow,
  setRow,
  startApiWorld,
  terminateRuns,
  workflowRow,
} from './api-support.ts';

let w: ApiWorld;
const created: string[] = [];
let userB: Session;
let projectB: TempRepo;

before(async () => {
  w = await startApiWorld();
  const u = await createUser(w.app, w.platformAdmin, { role: 'user', tenant_id: w.cast.tenantB });
  userB = await login(w.app.url, u.username, PASSWORD);
  const rootB = tenantProjectRoot(path.join(w.app.settings.SVC_DATA_DIR, 'projects'), w.cast.tenantB);
  mkdirSync(rootB, { recursive: true });
  projectB = makeGitRepo({ 'README.md': '# b\n' }, { root: path.join(rootB, 'b') });
});
after(async () => {
  await terminateRuns(w, created);
  projectB?.cleanup();
  await w?.close();
});

const call = (method: string, url: string, who?: Session, body?: unknown) =>
  api(w.app.url, method, url, { auth: who, body });
const create = (who: Session, body: Record<string, unknown> = {}) =>
  call('POST', '/api/autonomous/workflows', who, {
    requirement: 'Add a --json flag',
    project_path: w.project.path,
    ...body,
  });
const countOf = async (sql: string, params: unknown[] = []) => {
  const [r] = await w.app.database.sql.query<{ n: number }>(sql, params);
  return Number(r!.n);
};
const workflowCount = () => countOf('SELECT COUNT(*) AS n FROM autonomous_workflows');
const settingsUrl = () => `/api/tenants/${w.cast.tenantA}/autonomous`;

describe('readonly', () => {
  test('may not create a workflow or a batch: 403 saying who may, nothing written', async () => {
    const ro = w.cast.actors.readonly.session!;
    const before = await workflowCount();
    for (const body of [
      {},
      { requirement: undefined, items: [{ requirement: 'a' }, { requirement: 'b' }] },
    ]) {
      const r = await create(ro, body);
      assert.equal(r.status, 403, JSON.stringify(r.body));
      assert.match(r.body.error, /readonly role may not run or control autonomous workflows/);
    }
    assert.equal(await workflowCount(), before);
  });

  test('may not control, fork or delete even a workflow it owns; reads stay open to it', async () => {
    const ro = w.cast.actors.readonly.session!;
    const wf = await createWorkflow(w, w.owner);
    created.push(wf.id);
    // A completed workflow of the readonly user (one made before this rule, say): the table would
    // refuse every control with 409, so a 403 here is the permission.
    await setRow(w, wf.id, { status: 'completed', currentPhase: 'merge', userId: ro.user.id });
    const mid = (await addMilestone(w, wf.id, { kind: 'plan', phase: 'planning', sessionLine: 'main' })).id;
    const base = `/api/autonomous/workflows/${wf.id}`;
    const controls: [string, string, unknown?][] = [
      ...['pause', 'resume', 'stop', 'retry', 'done', 'verification_override', 'extend-planning-timeout'].map(
        (c): [string, string, unknown] => ['POST', `${base}/${c}`, {}],
      ),
      ['POST', `${base}/resume-with-feedback`, { feedback: 'more tests' }],
      ['POST', `${base}/milestones/${mid}/cancel`, {}],
      ['POST', `${base}/milestones/${mid}/fork`, {}],
      ['DELETE', base],
    ];
    for (const [method, url, body] of controls) {
      const r = await call(method, url, ro, body);
      assert.equal(r.status, 403, `${method} ${url}: ${JSON.stringify(r.body)}`);
      assert.match(r.body.error, /readonly role/);
    }
    assert.equal((await call('GET', base, ro)).status, 200);
    assert.equal((await call('GET', `${base}/timeline`, ro)).status, 200);
    assert.equal((await call('GET', '/api/autonomous/workflows', ro)).body.total, 1);
    // the owner's tenant admin still controls it (the table answers)
    assert.equal((await call('POST', `${base}/pause`, w.tenantAdmin, {})).status, 409);
  });
});

describe('per-tenant roles', () => {
  test('a tenant admin reads and sets them (audited); other tenants and non-admins may not', async () => {
    const r = await call('GET', settingsUrl(), w.tenantAdmin);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body, {
      tenant_id: w.cast.tenantA,
      run_roles: ['tenant_admin', 'manager', 'user'],
      github_token: { configured: false, hint: null },
    });
    assert.equal((await call('GET', settingsUrl(), w.otherTenantAdmin)).status, 403);
    assert.equal((await call('PUT', settingsUrl(), w.otherTenantAdmin, { run_roles: [] })).status, 403);
    for (const who of [w.owner, w.cast.actors.manager.session!, w.cast.actors.readonly.session!])
      assert.equal((await call('PUT', settingsUrl(), who, { run_roles: ['user'] })).status, 403);
    for (const bad of [{ run_roles: ['readonly'] }, { run_roles: ['user', 'user'] }, {}, { other: 1 }])
      assert.equal((await call('PUT', settingsUrl(), w.tenantAdmin, bad)).status, 400, JSON.stringify(bad));
  });

  test('restricted to tenant_admin: user and manager get 403 naming who may; admins still create', async () => {
    const put = await call('PUT', settingsUrl(), w.tenantAdmin, { run_roles: ['tenant_admin'] });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.deepEqual(put.body.run_roles, ['tenant_admin']);
    const [audit] = await w.app.database.sql.query<{ details: string; target_tenant_id: number }>(
      "SELECT details, target_tenant_id FROM audit_logs WHERE action = 'TENANT_AUTONOMOUS_SETTINGS_UPDATE' ORDER BY id DESC LIMIT 1",
    );
    assert.deepEqual(JSON.parse(audit!.details), { run_roles: ['tenant_admin'] });
    assert.equal(Number(audit!.target_tenant_id), w.cast.tenantA);
    const before = await workflowCount();
    for (const who of [w.owner, w.cast.actors.manager.session!]) {
      const r = await create(who);
      assert.equal(r.status, 403, JSON.stringify(r.body));
      assert.match(r.body.error, /allows tenant_admin to run autonomous workflows/);
      assert.match(r.body.error, /a tenant admin can change this/);
    }
    assert.equal(await workflowCount(), before);
    // tenant B is not affected; the tenant admin and the platform admin are allowed
    const mine = await create(w.tenantAdmin);
    assert.equal(mine.status, 201, JSON.stringify(mine.body));
    created.push(mine.body.id);
    const b = await create(userB, { project_path: projectB.path });
    assert.equal(b.status, 201, JSON.stringify(b.body));
    created.push(b.body.id);
    // controls follow the same rule: the owner of a workflow made earlier may no longer pause it
    await setRow(w, mine.body.id, { userId: w.owner.user.id, status: 'completed' });
    const paused = await call('POST', `/api/autonomous/workflows/${mine.body.id}/pause`, w.owner, {});
    assert.equal(paused.status, 403);
    assert.equal((await call('GET', `/api/autonomous/workflows/${mine.body.id}`, w.owner)).status, 200);
    // back to the default
    const back = await call('PUT', settingsUrl(), w.platformAdmin, {
      run_roles: ['tenant_admin', 'manager', 'user'],
    });
    assert.equal(back.status, 200);
    assert.equal(
      (await call('POST', `/api/autonomous/workflows/${mine.body.id}/pause`, w.owner, {})).status,
      409,
    );
  });
});

describe('projects belong to a tenant', () => {
  test("a user of tenant B at tenant A's repository: 403, no row, nothing read", async () => {
    const before = await workflowCount();
    const projectsBefore = await countOf('SELECT COUNT(*) AS n FROM projects');
    const rootA = tenantProjectRoot(path.join(w.app.settings.SVC_DATA_DIR, 'projects'), w.cast.tenantA);
    // A's repository, a subdirectory, a path that does not exist and a plain directory (no Git) all
    // answer the same: decided on the path, so nothing of A's folder is probed or run
    const plain = path.join(rootA, 'plain-dir');
    mkdirSync(plain, { recursive: true });
    for (const p of [
      w.project.path,
      path.join(w.project.path, 'src'),
      path.join(rootA, 'nothing-here'),
      plain,
    ])
      for (const body of [
        { project_path: p },
        { project_path: p, requirement: undefined, items: [{ requirement: 'x' }] },
      ]) {
        const r = await create(userB, body);
        assert.equal(r.status, 403, `${p}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.error, OTHER_TENANT_PROJECT_ERROR);
      }
    // and tenant A's user at B's repository
    const r = await create(w.owner, { project_path: projectB.path });
    assert.equal(r.status, 403);
    assert.equal(await workflowCount(), before);
    assert.equal(await countOf('SELECT COUNT(*) AS n FROM projects'), projectsBefore);
  });
});

describe('projects belong to a tenant, at run time too', () => {
  test("a workflow row of tenant B naming A's repository (from before tenant folders) is not prepared", async () => {
    const wf = await createWorkflow(w, w.owner);
    created.push(wf.id);
    await terminateRuns(w, [wf.id]);
    await setRow(w, wf.id, { tenantId: w.cast.tenantB, userId: userB.user.id });
    const workspace = autonomousWorkspace({ ...w.app, now: () => new Date() });
    await assert.rejects(workspace.prepare(wf.id), (e: unknown) => {
      assert.ok(e instanceof NotFoundError, String(e));
      assert.match(e.message, /tenant's project folder/);
      return true;
    });
    const row = await workflowRow(w, wf.id);
    assert.equal(row?.preferredWorktreePath, null, 'no worktree made');
    assert.equal(row?.baselineSha, null);
  });
});

describe('GitHub token of the tenant', () => {
  test('write-only: configured and a last-4 hint, never the token; removable; audited without it', async () => {
    const token = 'ghp_tenantAsSecretToken0123456789abcd';
    const put = await call('PUT', settingsUrl(), w.tenantAdmin, { github_token: token });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.deepEqual(put.body.github_token, { configured: true, hint: 'abcd' });
    const got = await call('GET', settingsUrl(), w.tenantAdmin);
    assert.ok(!JSON.stringify(got.body).includes(token));
    assert.deepEqual(got.body.github_token, { configured: true, hint: 'abcd' });
    const stored = await w.app.database.sql.query<{ c: string }>(
      'SELECT github_token_encrypted AS c FROM tenant_autonomous_settings WHERE tenant_id = ?',
      [w.cast.tenantA],
    );
    assert.ok(stored[0]?.c && !stored[0].c.includes(token), 'ciphertext only');
    const audits = await w.app.database.sql.query<{ details: string }>(
      "SELECT details FROM audit_logs WHERE action = 'TENANT_AUTONOMOUS_SETTINGS_UPDATE'",
    );
    assert.ok(audits.some((a) => JSON.parse(a.details).github_token === 'set'));
    assert.ok(audits.every((a) => !a.details.includes(token)));
    const other = await call('GET', `/api/tenants/${w.cast.tenantB}/autonomous`, w.platformAdmin);
    assert.deepEqual(other.body.github_token, { configured: false, hint: null });
    const removed = await call('PUT', settingsUrl(), w.tenantAdmin, { github_token: null });
    assert.deepEqual(removed.body.github_token, { configured: false, hint: null });
  });
});
