// The autonomous HTTP API's edge (api/routes/autonomous/): creation over real HTTP with a real Temporal
// start (201, batches, 400s naming the field, 403 without a tenant), the access matrix of all 22 routes
// (401 unauthenticated, 403 another user of the tenant, 404 another tenant or an unknown id, 400 a
// malformed id, the tenant's administrator and the platform administrator let through), the list's
// scope and filters, and controls refused by the transition table (409 with its reason, audited)
// before any round trip to Temporal. No worker runs here: an accepted control would wait for one, so
// every control below is one the table refuses.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CLI_PACKAGES, cliPackageSpec } from '../../../agent/cli-packages.ts';
import { tenantProjectRoot } from '../../../services/autonomous/projects.ts';
import { api, type Session } from '../../support/session.ts';
import {
  type ApiWorld,
  addMilestone,
  createWorkflow,
  runStatus,
  setRow,
  startApiWorld,
  terminateRuns,
  workflowRow,
} from './api-support.ts';

let w: ApiWorld;
const created: string[] = [];
let done: string; // a completed workflow of the owner: every control is refused by the table
let doneMilestone: number;

before(async () => {
  w = await startApiWorld();
  const wf = await createWorkflow(w, w.owner);
  done = wf.id;
  created.push(done);
  await setRow(w, done, { status: 'completed', currentPhase: 'merge' });
  doneMilestone = (await addMilestone(w, done, { kind: 'plan', phase: 'planning', sessionLine: 'main' })).id;
});
after(async () => {
  await terminateRuns(w, created);
  await w?.close();
});

const call = (method: string, path: string, who?: Session, body?: unknown) =>
  api(w.app.url, method, path, { auth: who, body });

describe('creation', () => {
  test('one workflow: 201 with id and the row in snake_case, its Temporal run started', async () => {
    const r = await call('POST', '/api/autonomous/workflows', w.owner, {
      requirement: 'Fix the parser\nmore detail',
      project_path: w.project.path,
      cli_tool: 'cli_gamma',
      model: 'gpt-5',
      branch_strategy: 'new_branch',
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    created.push(r.body.id);
    assert.match(r.body.id, /^aw-[0-9a-f-]{36}$/);
    assert.equal(r.body.workflow_id, r.body.id);
    assert.equal(r.body.status, 'pending');
    assert.equal(r.body.current_phase, 'preparation');
    assert.equal(r.body.cli_tool, 'cli_gamma');
    assert.equal(r.body.model, 'gpt-5');
    assert.equal(r.body.branch_strategy, 'new_branch');
    assert.equal(r.body.user_id, w.owner.user.id);
    assert.equal(r.body.tenant_id, w.cast.tenantA);
    assert.equal(r.body.title, 'Fix the parser');
    assert.deepEqual(r.body.definition_snapshot.requirement, {
      kind: 'text',
      text: 'Fix the parser\nmore detail',
    });
    assert.equal(typeof r.body.created_at, 'string');
    assert.equal('definitionSnapshot' in r.body, false);
    assert.equal(await runStatus(w, r.body.id), 'RUNNING');
    const [audit] = await w.app.database.sql.query<{ n: number }>(
      "SELECT COUNT(*) AS n FROM audit_logs WHERE action = 'AUTONOMOUS_WORKFLOW_CREATE' AND resource_id = ?",
      [r.body.id],
    );
    assert.equal(Number(audit!.n), 1);
  });

  test('a batch: 201 with the batch and its workflows, every item has a run', async () => {
    const r = await call('POST', '/api/autonomous/workflows', w.owner, {
      items: [{ requirement: 'one' }, { requirement: '#12' }],
      project_path: w.project.path,
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    for (const x of r.body.workflows) created.push(x.id);
    assert.match(r.body.batch.id, /^ab-/);
    assert.equal(r.body.batch.item_count, 2);
    assert.deepEqual(
      r.body.workflows.map((x: any) => [x.batch_id, x.batch_position, x.status]),
      [
        [r.body.batch.id, 0, 'pending'],
        [r.body.batch.id, 1, 'queued'],
      ],
    );
    for (const x of r.body.workflows) assert.equal(await runStatus(w, x.id), 'RUNNING');
  });

  test('400 naming the field, 403 without a tenant, 401 unauthenticated; nothing written', async () => {
    const count = async () =>
      Number(
        (await w.app.database.sql.query<{ n: number }>('SELECT COUNT(*) AS n FROM autonomous_workflows'))[0]!
          .n,
      );
    const before = await count();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ project_path: w.project.path }, /^requirement: /],
      [{ requirement: '', project_path: w.project.path }, /^requirement: /],
      [{ requirement: 'x', project_path: w.project.path, cli_tool: 'sh' }, /^cli_tool: /],
      [{ requirement: 'x', project_path: w.project.path, model: '$(id)' }, /^model: /],
      [{ requirement: 'x', project_path: w.project.path, branch_strategy: 'force' }, /^branch_strategy: /],
      [{ requirement: 'x', project_path: '/etc' }, /SVC_AUTONOMOUS_PROJECT_ROOTS/],
      [{ requirement: 'x' }, /project_path/],
    ];
    for (const [body, re] of cases) {
      const r = await call('POST', '/api/autonomous/workflows', w.owner, body);
      assert.equal(r.status, 400, JSON.stringify([body, r.body]));
      assert.match(r.body.error, re);
    }
    const global = await call('POST', '/api/autonomous/workflows', w.platformAdmin, {
      requirement: 'x',
      project_path: w.project.path,
    });
    assert.equal(global.status, 403);
    const anon = await call('POST', '/api/autonomous/workflows', undefined, {
      requirement: 'x',
      project_path: w.project.path,
    });
    assert.equal(anon.status, 401);
    assert.equal(await count(), before);
  });
});

describe('the CLI is checked at creation', () => {
  test('a CLI that cannot be run: 400 naming it and how to install it, nothing written; an install is seen at once', async () => {
    const rows = async () =>
      Number(
        (
          await w.app.database.sql.query<{ n: number }>(
            'SELECT (SELECT COUNT(*) FROM autonomous_workflows) + (SELECT COUNT(*) FROM autonomous_batches) + (SELECT COUNT(*) FROM projects) AS n',
          )
        )[0]!.n,
      );
    const saved = w.app.settings.autonomous.cli_paths;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-cli-check-'));
    const later = path.join(dir, 'claude');
    try {
      const before = await rows();
      // Not there yet; then a directory (not an executable file).
      for (const where of [later, dir]) {
        w.app.settings.autonomous.cli_paths = { ...saved, cli_beta: where };
        for (const body of [
          { requirement: 'x', project_path: w.project.path, cli_tool: 'cli_beta' },
          {
            items: [{ requirement: 'x', cli_tool: 'cli_gamma' }, { requirement: 'y' }],
            project_path: w.project.path,
          },
        ]) {
          const r = await call('POST', '/api/autonomous/workflows', w.owner, body);
          assert.equal(r.status, 400, JSON.stringify(r.body));
          assert.equal(
            r.body.error,
            'cli_tool: the CLI cli_beta cannot be run: the path configured for it in autonomous.cli_paths is not an executable file on the server. ' +
              `An operator must install it with \`npm install -g ${cliPackageSpec(CLI_PACKAGES.cli_beta!)}\` or \`npm run clis:install cli_beta\` (into ~/.cache/svc/clis) and set its path in autonomous.cli_paths (SVC_AUTONOMOUS__CLI_PATHS) or put \`claude\` on the service's PATH.`,
          );
        }
      }
      assert.equal(await rows(), before, 'no workflow, batch or project row');
      // Installed: the next creation passes (a missing CLI is not remembered).
      writeFileSync(later, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
      w.app.settings.autonomous.cli_paths = { ...saved, cli_beta: later };
      const ok = await call('POST', '/api/autonomous/workflows', w.owner, {
        requirement: 'x',
        project_path: w.project.path,
        cli_tool: 'cli_beta',
      });
      assert.equal(ok.status, 201, JSON.stringify(ok.body));
      created.push(ok.body.id);
    } finally {
      w.app.settings.autonomous.cli_paths = saved;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a retry while the CLI cannot be run: 400 in the same words before Temporal, the workflow stays failed', async () => {
    const wf = await createWorkflow(w, w.owner, { cli_tool: 'cli_beta' });
    created.push(wf.id);
    await setRow(w, wf.id, {
      status: 'failed',
      currentPhase: 'planning',
      error: 'runner_failure: 5 attempts failed',
    });
    const saved = w.app.settings.autonomous.cli_paths;
    w.app.settings.autonomous.cli_paths = { ...saved, cli_beta: '/nonexistent/claude' };
    try {
      const r = await call('POST', `/api/autonomous/workflows/${wf.id}/retry`, w.owner, {});
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.match(
        r.body.error,
        /^cli_tool: the CLI cli_beta cannot be run: .*`npm run clis:install cli_beta`/,
      );
      assert.equal((await workflowRow(w, wf.id))?.status, 'failed');
    } finally {
      w.app.settings.autonomous.cli_paths = saved;
    }
  });
});

describe('access matrix', () => {
  // Every route of the spec's table, against a completed workflow of the owner.
  const routes = (id: string, mid: number): [string, string, unknown?][] => [
    ['GET', `/api/autonomous/workflows/${id}`],
    ['POST', `/api/autonomous/workflows/${id}/pause`, {}],
    ['POST', `/api/autonomous/workflows/${id}/resume`, {}],
    ['POST', `/api/autonomous/workflows/${id}/stop`, {}],
    ['POST', `/api/autonomous/workflows/${id}/retry`, {}],
    ['GET', `/api/autonomous/workflows/${id}/timeline`],
    ['POST', `/api/autonomous/workflows/${id}/milestones/${mid}/cancel`, {}],
    ['POST', `/api/autonomous/workflows/${id}/milestones/${mid}/fork`, {}],
    ['GET', `/api/autonomous/workflows/${id}/forks`],
    ['GET', `/api/autonomous/workflows/${id}/milestones/${mid}/session`],
    ['GET', `/api/autonomous/workflows/${id}/milestones/${mid}/diff`],
    ['POST', `/api/autonomous/workflows/${id}/resume-with-feedback`, { feedback: 'more tests' }],
    ['POST', `/api/autonomous/workflows/${id}/verification_override`, {}],
    ['POST', `/api/autonomous/workflows/${id}/extend-planning-timeout`, {}],
    ['POST', `/api/autonomous/workflows/${id}/done`, {}],
    ['GET', `/api/autonomous/workflows/${id}/events/stream`],
    ['GET', `/api/autonomous/workflows/${id}/pr-diff`],
    ['GET', `/api/autonomous/workflows/${id}/pr-stats`],
    ['DELETE', `/api/autonomous/workflows/${id}`],
  ];

  test('unauthenticated 401, another user 403, another tenant 404, unknown 404, malformed 400', async () => {
    const unknown = 'aw-00000000-0000-4000-8000-000000000000';
    for (const [method, path, body] of routes(done, doneMilestone)) {
      const label = `${method} ${path}`;
      assert.equal((await call(method, path, undefined, body)).status, 401, label);
      const other = await call(method, path, w.otherUser, body);
      assert.equal(other.status, 403, `${label}: ${JSON.stringify(other.body)}`);
      const readonly = await call(method, path, w.cast.actors.readonly.session, body);
      assert.equal(readonly.status, 403, label);
      const foreign = await call(method, path, w.otherTenantAdmin, body);
      assert.equal(foreign.status, 404, `${label}: ${JSON.stringify(foreign.body)}`);
      assert.equal(foreign.body.error, 'Autonomous workflow not found');
    }
    for (const [method, path, body] of routes(unknown, doneMilestone))
      assert.equal((await call(method, path, w.owner, body)).status, 404, `${method} ${path}`);
    for (const [method, path, body] of routes('wf-1', doneMilestone))
      assert.equal((await call(method, path, w.owner, body)).status, 400, `${method} ${path}`);
    for (const [method, path, body] of routes(done, 0).filter(([, p]) => p.includes('/milestones/')))
      assert.equal((await call(method, path, w.owner, body)).status, 400, `${method} ${path}`);
    const batchUnknown = await call(
      'DELETE',
      '/api/autonomous/batches/ab-00000000-0000-4000-8000-000000000000',
      w.owner,
    );
    assert.equal(batchUnknown.status, 404);
    assert.equal((await call('DELETE', '/api/autonomous/batches/x', w.owner)).status, 400);
    assert.equal((await call('DELETE', '/api/autonomous/batches/x')).status, 401);
  });

  test('the owner, the tenant admin and the platform admin pass the access check', async () => {
    for (const who of [w.owner, w.tenantAdmin, w.platformAdmin]) {
      const detail = await call('GET', `/api/autonomous/workflows/${done}`, who);
      assert.equal(detail.status, 200);
      assert.equal(detail.body.id, done);
      assert.equal(detail.body.milestone_count, 1);
      assert.equal((await call('GET', `/api/autonomous/workflows/${done}/timeline`, who)).status, 200);
      assert.equal((await call('GET', `/api/autonomous/workflows/${done}/forks`, who)).status, 200);
      // A completed workflow: every control is refused by the transition table (409), which is
      // decided after access.
      for (const c of ['pause', 'resume', 'stop', 'retry', 'done', 'verification_override'])
        assert.equal((await call('POST', `/api/autonomous/workflows/${done}/${c}`, who, {})).status, 409, c);
      const pr = await call('GET', `/api/autonomous/workflows/${done}/pr-diff`, who);
      assert.equal(pr.status, 404);
      assert.equal(pr.body.error, 'The workflow has no pull request yet');
      assert.equal((await call('GET', `/api/autonomous/workflows/${done}/pr-stats`, who)).status, 404);
    }
    // A manager is no administrator: someone else's workflow is forbidden.
    assert.equal(
      (await call('GET', `/api/autonomous/workflows/${done}`, w.cast.actors.manager.session)).status,
      403,
    );
  });

  test('batch delete: another user 403, another tenant 404', async () => {
    const r = await call('POST', '/api/autonomous/workflows', w.owner, {
      items: [{ requirement: 'a' }, { requirement: 'b' }],
      project_path: w.project.path,
    });
    assert.equal(r.status, 201);
    for (const x of r.body.workflows) created.push(x.id);
    const path = `/api/autonomous/batches/${r.body.batch.id}`;
    assert.equal((await call('DELETE', path, w.otherUser)).status, 403);
    assert.equal((await call('DELETE', path, w.otherTenantAdmin)).status, 404);
    assert.equal((await call('DELETE', path)).status, 401);
    const items = await call('GET', `/api/autonomous/workflows?batch_id=${r.body.batch.id}`, w.owner);
    assert.equal(items.body.total, 2, 'nothing deleted');
  });
});

describe('list', () => {
  test('own workflows for a user, the tenant for its admin, none across tenants; filters and bounds', async () => {
    const mine = await call('GET', '/api/autonomous/workflows?limit=200', w.owner);
    assert.equal(mine.status, 200);
    assert.ok(mine.body.total >= 4);
    assert.ok(mine.body.workflows.every((x: any) => x.user_id === w.owner.user.id));
    // The caller's own project folder (the creation form shows it); none without a tenant.
    assert.deepEqual(mine.body.project_roots, [
      tenantProjectRoot(path.join(w.app.settings.SVC_DATA_DIR, 'projects'), w.cast.tenantA),
    ]);
    assert.deepEqual(
      (await call('GET', '/api/autonomous/workflows', w.platformAdmin)).body.project_roots,
      [],
    );
    const other = await createWorkflow(w, w.otherUser);
    created.push(other.id);
    const theirs = await call('GET', '/api/autonomous/workflows', w.otherUser);
    assert.deepEqual(
      theirs.body.workflows.map((x: any) => x.id),
      [other.id],
    );
    const admin = await call('GET', '/api/autonomous/workflows?limit=200', w.tenantAdmin);
    const ids = admin.body.workflows.map((x: any) => x.id);
    assert.ok(ids.includes(other.id) && ids.includes(done));
    const foreign = await call('GET', '/api/autonomous/workflows', w.otherTenantAdmin);
    assert.equal(foreign.body.total, 0);
    const completed = await call('GET', '/api/autonomous/workflows?status=completed', w.owner);
    assert.deepEqual(
      completed.body.workflows.map((x: any) => x.id),
      [done],
    );
    const paged = await call('GET', '/api/autonomous/workflows?limit=1&offset=1', w.owner);
    assert.equal(paged.body.workflows.length, 1);
    assert.equal(paged.body.total, mine.body.total);
    for (const q of ['limit=0', 'limit=201', 'offset=-1', 'status=running', 'batch_id=x', 'other=1'])
      assert.equal((await call('GET', `/api/autonomous/workflows?${q}`, w.owner)).status, 400, q);
    assert.equal((await call('GET', '/api/autonomous/workflows')).status, 401);
  });
});

describe('controls refused by the transition table (409 before Temporal)', () => {
  test('retry of a running workflow, resume of a non-paused one, and the others out of state', async () => {
    const wf = await createWorkflow(w, w.owner);
    created.push(wf.id);
    await setRow(w, wf.id, { status: 'developing', currentPhase: 'development' });
    const post = (c: string, body: unknown = {}) =>
      call('POST', `/api/autonomous/workflows/${wf.id}/${c}`, w.owner, body);
    const retry = await post('retry');
    assert.equal(retry.status, 409);
    assert.match(retry.body.error, /retry is only for failed or planning_timeout/);
    const resume = await post('resume');
    assert.equal(resume.status, 409);
    assert.match(resume.body.error, /only a paused workflow can be resumed/);
    const feedback = await post('resume-with-feedback', { feedback: 'try again' });
    assert.equal(feedback.status, 409);
    assert.match(feedback.body.error, /only a waiting workflow takes feedback/);
    const override = await post('verification_override', { note: 'looks right' });
    assert.equal(override.status, 409);
    assert.match(override.body.error, /paused by its acceptance verification/);
    const extend = await post('extend-planning-timeout', { seconds: 600 });
    assert.equal(extend.status, 409);
    await setRow(w, wf.id, { status: 'paused', pausedBy: 'manual', previousStatus: 'developing' });
    const pause = await post('pause');
    assert.equal(pause.status, 409);
    assert.equal(pause.body.error, 'the workflow is already paused');
    await setRow(w, wf.id, { status: 'pending', pausedBy: null, previousStatus: null });
    const cancel = await call(
      'POST',
      `/api/autonomous/workflows/${wf.id}/milestones/${(await addMilestone(w, wf.id, { kind: 'plan', phase: 'planning' })).id}/cancel`,
      w.owner,
      {},
    );
    assert.equal(cancel.status, 409);
    assert.match(cancel.body.error, /has not started yet/);
    const [audit] = await w.app.database.sql.query<{ n: number }>(
      `SELECT COUNT(*) AS n FROM audit_logs WHERE action = 'AUTONOMOUS_WORKFLOW_RETRY'
         AND resource_id = ? AND success = ?`,
      [wf.id, w.app.database.dialect === 'postgres' ? false : 0],
    );
    assert.equal(Number(audit!.n), 1, 'the refused retry is audited');
  });

  test('bodies are validated at the edge: feedback, note, seconds, unknown fields', async () => {
    const wf = await createWorkflow(w, w.owner);
    created.push(wf.id);
    await setRow(w, wf.id, { status: 'waiting', currentPhase: 'wait' });
    const post = (c: string, body: unknown) =>
      call('POST', `/api/autonomous/workflows/${wf.id}/${c}`, w.owner, body);
    const cases: [string, unknown, RegExp][] = [
      ['resume-with-feedback', {}, /^feedback: /],
      ['resume-with-feedback', { feedback: '   ' }, /^feedback: must not be empty/],
      ['resume-with-feedback', { feedback: 'x'.repeat(20_001) }, /^feedback: must be at most 20000/],
      ['resume-with-feedback', { feedback: 7 }, /^feedback: /],
      ['extend-planning-timeout', { seconds: 59 }, /^seconds: /],
      ['extend-planning-timeout', { seconds: 86_401 }, /^seconds: /],
      ['extend-planning-timeout', { seconds: 90.5 }, /^seconds: /],
      ['extend-planning-timeout', { seconds: '600' }, /^seconds: /],
      ['verification_override', { note: 'x'.repeat(2001) }, /^note: /],
      ['pause', { force: true }, /force/],
    ];
    for (const [c, body, re] of cases) {
      const r = await post(c, body);
      assert.equal(r.status, 400, `${c} ${JSON.stringify(body).slice(0, 60)}: ${JSON.stringify(r.body)}`);
      assert.match(r.body.error, re);
    }
  });

  test("cancel of a milestone that is not the workflow's: 404", async () => {
    const a = await createWorkflow(w, w.owner);
    const b = await createWorkflow(w, w.owner);
    created.push(a.id, b.id);
    const m = await addMilestone(w, b.id, { kind: 'plan', phase: 'planning' });
    const r = await call('POST', `/api/autonomous/workflows/${a.id}/milestones/${m.id}/cancel`, w.owner, {});
    assert.equal(r.status, 404);
    assert.equal(r.body.error, 'Milestone not found');
    const fork = await call('POST', `/api/autonomous/workflows/${a.id}/milestones/${m.id}/fork`, w.owner, {});
    assert.equal(fork.status, 404);
  });
});
