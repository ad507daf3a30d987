// What the autonomous API reads and writes besides controls, over real HTTP on a real database, the
// test Temporal dev server and a real local forge (bare repository, worktrees, a pull request):
// detail and timeline, fork at a milestone (history copied up to the fork point, phase, baseline,
// snapshot, its own run), deletes (refused while running or held; runs terminated, worktree removed,
// milestones gone; batches all or nothing), a milestone's session transcript (the line's proxied
// messages, paged), a milestone's commit diff, the PR diff and stats, and creation rolled back with
// 503 when Temporal is unreachable.
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { AppError } from '../../../domain/errors.ts';
import { workflowBranch } from '../../../domain/forge/branch-name.ts';
import { createAutonomousWorkflows } from '../../../services/autonomous/create-workflows.ts';
import { autonomousDeletion } from '../../../services/autonomous/delete.ts';
import { sessionLines } from '../../../services/autonomous/session-lines.ts';
import { autonomousRuns } from '../../../services/autonomous/temporal-runs.ts';
import { localForgeFromSettings } from '../../../services/forge/local-forge.ts';
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
const usage = (t: number, i: number, o: number) => ({
  totalTokens: t,
  inputTokens: i,
  outputTokens: o,
  requestCount: 1,
});

before(async () => {
  w = await startApiWorld();
});
after(async () => {
  await terminateRuns(w, created);
  await w?.close();
});

const call = (method: string, path: string, who?: Session, body?: unknown) =>
  api(w.app.url, method, path, { auth: who, body });

async function newWorkflow(status?: string, fields: Parameters<typeof setRow>[2] = {}) {
  const wf = await createWorkflow(w, w.owner);
  created.push(wf.id);
  if (status) await setRow(w, wf.id, { status, ...fields });
  return wf;
}

const milestoneCount = async (id: string) =>
  Number(
    (
      await w.app.database.sql.query<{ n: number }>(
        'SELECT COUNT(*) AS n FROM workflow_milestones WHERE workflow_id = ?',
        [id],
      )
    )[0]!.n,
  );

describe('detail, timeline and fork', () => {
  test('fork at a milestone: history up to it, feedback phase, latest commit as baseline, own run', async () => {
    const src = await newWorkflow('developing', {
      currentPhase: 'development',
      baselineSha: 'b'.repeat(40),
    });
    const m1 = await addMilestone(w, src.id, {
      kind: 'plan',
      phase: 'planning',
      sessionLine: 'main',
      usage: usage(100, 60, 40),
    });
    const m2 = await addMilestone(w, src.id, {
      kind: 'implementation',
      phase: 'development',
      commitSha: 'c'.repeat(40),
      usage: usage(50, 30, 20),
    });
    const m3 = await addMilestone(w, src.id, {
      kind: 'test',
      phase: 'development',
      usage: usage(30, 20, 10),
    });
    await addMilestone(w, src.id, {
      kind: 'pr_review',
      phase: 'pr_review',
      commitSha: 'd'.repeat(40),
      usage: usage(10, 5, 5),
    });

    const timeline = await call('GET', `/api/autonomous/workflows/${src.id}/timeline`, w.owner);
    assert.equal(timeline.status, 200);
    assert.deepEqual(
      timeline.body.milestones.map((m: any) => [m.sequence, m.kind, m.phase, m.status, m.phase_total_tokens]),
      [
        [1, 'plan', 'planning', 'completed', 100],
        [2, 'implementation', 'development', 'completed', 50],
        [3, 'test', 'development', 'completed', 30],
        [4, 'pr_review', 'pr_review', 'completed', 10],
      ],
    );
    const t2 = timeline.body.milestones[1];
    assert.equal(t2.commit_sha, 'c'.repeat(40));
    assert.equal(t2.is_cancelled, false);
    assert.equal(t2.phase_input_tokens, 30);
    assert.equal(t2.phase_output_tokens, 20);
    assert.equal(t2.phase_request_count, 1);
    for (const k of [
      'diff_additions',
      'diff_deletions',
      'diff_files',
      'error',
      'session_line',
      'finished_at',
    ])
      assert.ok(k in t2, k);

    const r = await call('POST', `/api/autonomous/workflows/${src.id}/milestones/${m3.id}/fork`, w.owner, {});
    assert.equal(r.status, 201, JSON.stringify(r.body));
    created.push(r.body.id);
    const fork = r.body;
    assert.match(fork.id, /^aw-/);
    assert.notEqual(fork.id, src.id);
    assert.equal(fork.forked_from_workflow_id, src.id);
    assert.equal(fork.forked_from_milestone_id, m3.id);
    assert.equal(fork.status, 'pending');
    assert.equal(fork.current_phase, 'development');
    assert.equal(fork.baseline_sha, 'c'.repeat(40));
    assert.equal(fork.branch_strategy, 'worktree');
    assert.equal(fork.user_id, w.owner.user.id);
    assert.equal(fork.tenant_id, w.cast.tenantA);
    assert.equal(fork.project_id, src.project_id);
    assert.equal(fork.cli_tool, src.cli_tool);
    assert.equal(fork.total_tokens, 180, 'totals include the copied history');
    assert.deepEqual(fork.definition_snapshot.forkedFrom, { workflowId: src.id, milestoneId: m3.id });
    assert.deepEqual(fork.definition_snapshot.requirement, src.definition_snapshot.requirement);
    assert.equal(fork.definition_snapshot.batch, null);
    assert.equal(await runStatus(w, fork.id), 'RUNNING');

    const forkTimeline = await call('GET', `/api/autonomous/workflows/${fork.id}/timeline`, w.owner);
    assert.deepEqual(
      forkTimeline.body.milestones.map((m: any) => [m.sequence, m.kind, m.phase_total_tokens]),
      [
        [1, 'plan', 100],
        [2, 'implementation', 50],
        [3, 'test', 30],
      ],
    );
    assert.equal(await milestoneCount(src.id), 4, 'the source keeps its history');

    // At the first milestone: planning again, and no commit yet so the source's baseline.
    const early = await call(
      'POST',
      `/api/autonomous/workflows/${src.id}/milestones/${m1.id}/fork`,
      w.owner,
      {},
    );
    assert.equal(early.status, 201);
    created.push(early.body.id);
    assert.equal(early.body.current_phase, 'planning');
    assert.equal(early.body.baseline_sha, 'b'.repeat(40));

    const forks = await call('GET', `/api/autonomous/workflows/${src.id}/forks`, w.owner);
    assert.deepEqual(forks.body.forks.map((f: any) => f.id).sort(), [fork.id, early.body.id].sort());
    assert.equal((await call('GET', `/api/autonomous/workflows/${src.id}/forks`, w.otherUser)).status, 403);

    const detail = await call('GET', `/api/autonomous/workflows/${src.id}`, w.owner);
    assert.equal(detail.body.milestone_count, 4);
    assert.deepEqual(Object.keys(detail.body.session_lines), ['main', 'review', 'test', 'verification']);
    const [audit] = await w.app.database.sql.query<{ n: number }>(
      "SELECT COUNT(*) AS n FROM audit_logs WHERE action = 'AUTONOMOUS_WORKFLOW_FORK' AND resource_id = ?",
      [fork.id],
    );
    assert.equal(Number(audit!.n), 1);
    void m2;
  });

  test('a workflow that has not started cannot be forked (409), nor by someone else (403)', async () => {
    const src = await newWorkflow();
    const m = await addMilestone(w, src.id, { kind: 'plan', phase: 'planning' });
    const r = await call('POST', `/api/autonomous/workflows/${src.id}/milestones/${m.id}/fork`, w.owner, {});
    assert.equal(r.status, 409);
    assert.match(r.body.error, /has not started yet/);
    await setRow(w, src.id, { status: 'failed' });
    const other = await call(
      'POST',
      `/api/autonomous/workflows/${src.id}/milestones/${m.id}/fork`,
      w.otherUser,
      {},
    );
    assert.equal(other.status, 403);
    const foreign = await call(
      'POST',
      `/api/autonomous/workflows/${src.id}/milestones/${m.id}/fork`,
      w.otherTenantAdmin,
      {},
    );
    assert.equal(foreign.status, 404);
    const byAdmin = await call(
      'POST',
      `/api/autonomous/workflows/${src.id}/milestones/${m.id}/fork`,
      w.tenantAdmin,
      {},
    );
    assert.equal(byAdmin.status, 201);
    created.push(byAdmin.body.id);
    assert.equal(byAdmin.body.user_id, w.owner.user.id, 'the fork keeps the source owner');
  });
});

describe('delete', () => {
  test('refused while running or held (failed excepted); otherwise run terminated, rows gone', async () => {
    const wf = await newWorkflow('developing');
    await addMilestone(w, wf.id, { kind: 'plan', phase: 'planning' });
    for (const [status, pausedBy] of [
      ['developing', null],
      ['paused', 'manual'],
      ['waiting', null],
      ['planning_timeout', null],
      ['verification_pending', null],
    ] as const) {
      await setRow(w, wf.id, { status, pausedBy });
      const r = await call('DELETE', `/api/autonomous/workflows/${wf.id}`, w.owner);
      assert.equal(r.status, 409, status);
      assert.match(r.body.error, /stop the workflow before deleting it/);
    }
    assert.ok(await workflowRow(w, wf.id), 'still there');
    assert.equal(await runStatus(w, wf.id), 'RUNNING', 'its run untouched');

    await setRow(w, wf.id, { status: 'failed', pausedBy: null });
    const r = await call('DELETE', `/api/autonomous/workflows/${wf.id}`, w.owner);
    assert.equal(r.status, 204);
    assert.equal(await workflowRow(w, wf.id), undefined);
    assert.equal(await milestoneCount(wf.id), 0, 'milestones cascade');
    assert.equal(await runStatus(w, wf.id), 'TERMINATED');
    assert.equal((await call('GET', `/api/autonomous/workflows/${wf.id}`, w.owner)).status, 404);

    const pending = await newWorkflow();
    assert.equal(
      (await call('DELETE', `/api/autonomous/workflows/${pending.id}`, w.tenantAdmin)).status,
      204,
    );
    assert.equal(await runStatus(w, pending.id), 'TERMINATED');
    const [audit] = await w.app.database.sql.query<{ n: number }>(
      "SELECT COUNT(*) AS n FROM audit_logs WHERE action = 'AUTONOMOUS_WORKFLOW_DELETE' AND resource_id = ?",
      [pending.id],
    );
    assert.equal(Number(audit!.n), 1);
  });

  test('compare-and-set: a workflow that moved on after it was read is not deleted (409)', async () => {
    const wf = await newWorkflow();
    const stale = (await workflowRow(w, wf.id))!;
    await setRow(w, wf.id, { status: 'preparing', currentPhase: 'preparation' });
    const deletion = autonomousDeletion({
      database: w.app.database,
      settings: w.app.settings,
      runs: autonomousRuns(w.app.deps.temporal),
      logger: w.app.deps.logger,
    });
    await assert.rejects(deletion.deleteWorkflow(stale), (e: unknown) => {
      assert.ok(e instanceof AppError);
      assert.equal(e.status, 409);
      assert.match(e.message, /stop the workflow before deleting it/);
      return true;
    });
    assert.equal((await workflowRow(w, wf.id))?.status, 'preparing', 'still there');
    assert.equal(await runStatus(w, wf.id), 'RUNNING', 'its run untouched');
  });

  test('a finished workflow whose run already ended, with a worktree: worktree removed', async () => {
    const wf = await newWorkflow('completed');
    await terminateRuns(w, [wf.id]);
    const forge = localForgeFromSettings(w.app.settings, w.app.database);
    const repo = await forge.ensureRepository({ id: wf.project_id, path: w.project.path });
    const dir = path.join(forge.worktreeRoot, `del-${wf.id}`);
    await forge.createWorktree(repo, {
      branch: workflowBranch(wf.id),
      baseSha: await forge.baseline(repo),
      path: dir,
    });
    writeFileSync(path.join(dir, 'scratch.txt'), 'uncommitted\n');
    await setRow(w, wf.id, { preferredWorktreePath: dir, branch: workflowBranch(wf.id) });
    assert.ok(existsSync(dir));
    assert.equal((await call('DELETE', `/api/autonomous/workflows/${wf.id}`, w.owner)).status, 204);
    assert.equal(existsSync(dir), false, 'worktree removed');
    assert.equal(await workflowRow(w, wf.id), undefined);
  });

  test('a worktree path outside the forge root is never touched', async () => {
    const wf = await newWorkflow('cancelled');
    await setRow(w, wf.id, { preferredWorktreePath: w.project.path });
    assert.equal((await call('DELETE', `/api/autonomous/workflows/${wf.id}`, w.owner)).status, 204);
    assert.ok(existsSync(path.join(w.project.path, 'README.md')), 'the project is intact');
  });

  test('batch: all items or nothing; queued and pending runs terminated', async () => {
    const r = await call('POST', '/api/autonomous/workflows', w.owner, {
      items: [{ requirement: 'a' }, { requirement: 'b' }, { requirement: 'c' }],
      project_path: w.project.path,
    });
    assert.equal(r.status, 201);
    const ids: string[] = r.body.workflows.map((x: any) => x.id);
    created.push(...ids);
    await setRow(w, ids[0]!, { status: 'developing' });
    const refused = await call('DELETE', `/api/autonomous/batches/${r.body.batch.id}`, w.owner);
    assert.equal(refused.status, 409);
    assert.match(refused.body.error, /stop the workflow before deleting it/);
    for (const id of ids) {
      assert.ok(await workflowRow(w, id));
      assert.equal(await runStatus(w, id), 'RUNNING');
    }
    await setRow(w, ids[0]!, { status: 'completed' });
    assert.equal((await call('DELETE', `/api/autonomous/batches/${r.body.batch.id}`, w.owner)).status, 204);
    for (const id of ids) {
      assert.equal(await workflowRow(w, id), undefined);
      assert.equal(await runStatus(w, id), 'TERMINATED');
    }
    const { db, t } = w.app.database;
    const batch = await db
      .select()
      .from(t.autonomousBatches)
      .where(eq(t.autonomousBatches.batchId, r.body.batch.id));
    assert.equal(batch.length, 0);
    assert.equal((await call('DELETE', `/api/autonomous/batches/${r.body.batch.id}`, w.owner)).status, 404);
  });
});

describe('milestone session, diff and the pull request', () => {
  test("the session transcript: the line's messages in order, paged; 404 without a line", async () => {
    const wf = await newWorkflow('developing');
    const lines = await sessionLines({
      database: w.app.database,
      settings: w.app.settings,
      now: () => new Date(),
    }).ensureLines(wf.id, 'cli_beta');
    const main = lines.find((l) => l.line === 'main')!.sessionId;
    const review = lines.find((l) => l.line === 'review')!.sessionId;
    const { db, t } = w.app.database;
    const row = (
      id: string,
      session: string,
      role: string,
      at: string,
      tokens: number,
      content: string | null,
    ) => ({
      date: at.slice(0, 10),
      toolName: 'cli_beta',
      messageId: id,
      role,
      content,
      tokensUsed: tokens,
      inputTokens: Math.floor(tokens / 2),
      outputTokens: tokens - Math.floor(tokens / 2),
      timestamp: new Date(at),
      agentSessionId: session,
      messageSource: role === 'assistant' ? 'proxy' : 'remote',
      tenantId: w.cast.tenantA,
      userId: w.owner.user.id,
    });
    await db
      .insert(t.dailyMessages)
      .values([
        row(`m3-${wf.id}`, main, 'assistant', '2026-11-20T10:00:03Z', 30, null),
        row(`m1-${wf.id}`, main, 'user', '2026-11-20T10:00:01Z', 0, 'plan it'),
        row(`m2-${wf.id}`, main, 'assistant', '2026-11-20T10:00:02Z', 20, null),
        row(`r1-${wf.id}`, review, 'assistant', '2026-11-20T10:00:02Z', 99, null),
      ]);
    const m = await addMilestone(w, wf.id, { kind: 'plan', phase: 'planning', sessionLine: 'main' });
    const r = await call('GET', `/api/autonomous/workflows/${wf.id}/milestones/${m.id}/session`, w.owner);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.line, 'main');
    assert.equal(r.body.session_id, main);
    assert.equal(r.body.total, 3);
    assert.deepEqual(
      r.body.messages.map((x: any) => [x.message_id, x.role, x.tokens_used, x.content]),
      [
        [`m1-${wf.id}`, 'user', 0, 'plan it'],
        [`m2-${wf.id}`, 'assistant', 20, null],
        [`m3-${wf.id}`, 'assistant', 30, null],
      ],
    );
    assert.equal(r.body.messages[0].timestamp, '2026-11-20T10:00:01.000Z');
    const paged = await call(
      'GET',
      `/api/autonomous/workflows/${wf.id}/milestones/${m.id}/session?limit=1&offset=1`,
      w.owner,
    );
    assert.deepEqual(
      paged.body.messages.map((x: any) => x.message_id),
      [`m2-${wf.id}`],
    );
    assert.equal(paged.body.total, 3);
    for (const q of ['limit=0', 'limit=1001', 'offset=-1'])
      assert.equal(
        (await call('GET', `/api/autonomous/workflows/${wf.id}/milestones/${m.id}/session?${q}`, w.owner))
          .status,
        400,
        q,
      );
    const feedback = await addMilestone(w, wf.id, { kind: 'feedback', phase: 'wait', status: 'completed' });
    const none = await call(
      'GET',
      `/api/autonomous/workflows/${wf.id}/milestones/${feedback.id}/session`,
      w.owner,
    );
    assert.equal(none.status, 404);
    assert.equal(none.body.error, 'The milestone has no session line');
    assert.equal(
      (await call('GET', `/api/autonomous/workflows/${wf.id}/milestones/${m.id}/session`, w.otherUser))
        .status,
      403,
    );
  });

  test("a milestone's commit diff and stats; no commit: empty diff and zeros", async () => {
    const sha = w.project.commit({ 'src/a.txt': 'one\nTWO\nthree\n', 'src/b.txt': 'new\n' }, 'edit');
    const wf = await newWorkflow('developing');
    const forge = localForgeFromSettings(w.app.settings, w.app.database);
    const repo = await forge.ensureRepository({ id: wf.project_id, path: w.project.path });
    await forge.refreshFromProject({ id: wf.project_id, path: w.project.path });
    void repo;
    const m = await addMilestone(w, wf.id, { kind: 'implementation', phase: 'development', commitSha: sha });
    const r = await call('GET', `/api/autonomous/workflows/${wf.id}/milestones/${m.id}/diff`, w.owner);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.commit_sha, sha);
    assert.equal(r.body.additions, 3);
    assert.equal(r.body.deletions, 1);
    assert.deepEqual(r.body.files.map((f: any) => [f.path, f.additions, f.deletions]).sort(), [
      ['src/a.txt', 2, 1],
      ['src/b.txt', 1, 0],
    ]);
    assert.match(r.body.diff, /^-two$/m);
    assert.match(r.body.diff, /^\+TWO$/m);
    assert.equal(r.body.truncated, false);

    // Past settings.forge.diff_max_bytes the text is cut and says so; the stats stay complete.
    const big = w.project.commit({ 'big.txt': `${'line of text\n'.repeat(5000)}` }, 'big');
    await forge.refreshFromProject({ id: wf.project_id, path: w.project.path });
    const bigMilestone = await addMilestone(w, wf.id, {
      kind: 'implementation',
      phase: 'development',
      commitSha: big,
    });
    const original = w.app.settings.forge.diff_max_bytes;
    w.app.settings.forge.diff_max_bytes = 1024;
    try {
      const cut = await call(
        'GET',
        `/api/autonomous/workflows/${wf.id}/milestones/${bigMilestone.id}/diff`,
        w.owner,
      );
      assert.equal(cut.status, 200);
      assert.equal(cut.body.truncated, true);
      assert.ok(Buffer.byteLength(cut.body.diff) <= 1024, `${Buffer.byteLength(cut.body.diff)} bytes`);
      assert.equal(cut.body.additions, 5000);
    } finally {
      w.app.settings.forge.diff_max_bytes = original;
    }

    const plain = await addMilestone(w, wf.id, { kind: 'plan', phase: 'planning' });
    const empty = await call(
      'GET',
      `/api/autonomous/workflows/${wf.id}/milestones/${plain.id}/diff`,
      w.owner,
    );
    assert.equal(empty.status, 200);
    assert.deepEqual(
      [empty.body.diff, empty.body.additions, empty.body.deletions, empty.body.files, empty.body.commit_sha],
      ['', 0, 0, [], null],
    );
  });

  test('the pull request diff and stats on the local forge', async () => {
    const wf = await newWorkflow('pr_review');
    const forge = localForgeFromSettings(w.app.settings, w.app.database);
    const repo = await forge.ensureRepository({ id: wf.project_id, path: w.project.path });
    const dir = path.join(forge.worktreeRoot, `pr-${wf.id}`);
    const wt = await forge.createWorktree(repo, {
      branch: workflowBranch(wf.id),
      baseSha: await forge.baseline(repo),
      path: dir,
    });
    writeFileSync(path.join(dir, 'feature.txt'), 'a\nb\n');
    writeFileSync(path.join(dir, 'README.md'), '# app v2\n');
    await forge.commitAll(wt, 'feature');
    const pr = await forge.openPullRequest({
      repo,
      head: wt.branch,
      base: repo.defaultBranch,
      title: 'Add a feature',
      workflowId: wf.id,
    });
    const before = await call('GET', `/api/autonomous/workflows/${wf.id}/pr-stats`, w.owner);
    assert.equal(before.status, 404);
    assert.equal(before.body.error, 'The workflow has no pull request yet');
    await setRow(w, wf.id, { prNumber: pr.number });
    const d = await call('GET', `/api/autonomous/workflows/${wf.id}/pr-diff`, w.owner);
    assert.equal(d.status, 200, JSON.stringify(d.body));
    assert.equal(d.body.pr_number, pr.number);
    assert.equal(d.body.status, 'open');
    assert.equal(d.body.additions, 3);
    assert.equal(d.body.deletions, 1);
    assert.match(d.body.diff, /^\+# app v2$/m);
    assert.match(d.body.diff, /feature\.txt/);
    const s = await call('GET', `/api/autonomous/workflows/${wf.id}/pr-stats`, w.tenantAdmin);
    assert.equal(s.status, 200);
    assert.equal(s.body.changed_files, 2);
    assert.equal(s.body.additions, 3);
    assert.equal('diff' in s.body, false);
    assert.equal((await call('GET', `/api/autonomous/workflows/${wf.id}/pr-diff`, w.otherUser)).status, 403);
  });
});

describe('Temporal unreachable', () => {
  test('creation answers 503 and leaves no row', async () => {
    // Nothing listens there; each request gives up connecting after 0.5 s instead of the default 5 s.
    const down = await startApiWorld({
      env: { TEMPORAL_ADDRESS: '127.0.0.1:9', SVC_TEMPORAL_CONNECT_TIMEOUT_MS: '500' },
    });
    try {
      const r = await api(down.app.url, 'POST', '/api/autonomous/workflows', {
        auth: down.owner,
        body: { requirement: 'x', project_path: down.project.path },
      });
      assert.equal(r.status, 503, JSON.stringify(r.body));
      assert.deepEqual(r.body, { error: 'Background processing is unavailable' });
      const batch = await api(down.app.url, 'POST', '/api/autonomous/workflows', {
        auth: down.owner,
        body: { items: [{ requirement: 'x' }, { requirement: 'y' }], project_path: down.project.path },
      });
      assert.equal(batch.status, 503);
      const [n] = await down.app.database.sql.query<{ n: number }>(
        'SELECT (SELECT COUNT(*) FROM autonomous_workflows) + (SELECT COUNT(*) FROM autonomous_batches) AS n',
      );
      assert.equal(Number(n!.n), 0);
      // A row written while Temporal was up: a control answers 503, a delete still removes the row
      // (the run is terminated best effort).
      const made = await createAutonomousWorkflows(
        { database: down.app.database, settings: down.app.settings, now: () => new Date() },
        { id: down.owner.user.id, tenantId: down.owner.user.tenant_id },
        { requirement: 'x', project_path: down.project.path },
      );
      if (made.kind !== 'single') return assert.fail('single expected');
      const id = made.workflow.workflowId;
      const pause = await api(down.app.url, 'POST', `/api/autonomous/workflows/${id}/pause`, {
        auth: down.owner,
        body: {},
      });
      assert.equal(pause.status, 503, JSON.stringify(pause.body));
      assert.equal(pause.body.error, 'Background processing is unavailable');
      const del = await api(down.app.url, 'DELETE', `/api/autonomous/workflows/${id}`, { auth: down.owner });
      assert.equal(del.status, 204);
    } finally {
      await down.close();
    }
  });
});
