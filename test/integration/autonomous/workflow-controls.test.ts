// Controls of a running autonomous workflow, end to end against the real worker: pause freezes the
// agent's process and resume continues it; stop kills it; cancel-round at a milestone then
// resume-with-feedback; planning timeout, retry and extension. The controls are the Temporal updates
// the API sends (workflows/autonomous/contract.ts); the API's own checks are tested in api-*.test.ts.
// store-independent: the workflow's pause, resume and cancel; the control rows and their API are covered
//   on both stores by api-controls, and the activities' rows by workflow-e2e and the chaos tests
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Actor,
  AUTONOMOUS_REFUSED,
  cancelRoundUpdate,
  extendPlanningTimeoutUpdate,
  pauseUpdate,
  resumeUpdate,
  resumeWithFeedbackUpdate,
  retryUpdate,
  stopUpdate,
} from '../../../workflows/autonomous/contract.ts';
import { processState, waitForFile, waitGone } from './runner-support.ts';
import { startWorkflowWorld, stepScript, UNCONFINED, type WorkflowWorld } from './workflow-support.ts';

let world: WorkflowWorld;
const actor: Actor = { userId: 0, username: 'tester' };
const tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-wf-controls-'));

before(async () => {
  world = await startWorkflowWorld({ env: UNCONFINED }); // pid files in a private temp dir
  actor.userId = world.userId;
});
after(async () => {
  await world?.close();
});

const handle = (workflowId: string) => world.handle(workflowId);

/** A workflow whose `step` sleeps `ms` after writing its pid (so a test can act while it runs). */
async function startWithSlowStep(step: string, ms: number, extra: Parameters<typeof stepScript>[0] = {}) {
  const pidFile = path.join(tmp, `${step}-${Date.now()}.pid`);
  const base = stepScript();
  const project = world.project({
    ...base,
    [step]: {
      pidFile,
      steps: [{ call: 1 }, { sleep: ms }, ...(base[step.split('@')[0]!]!.steps.slice(1) as unknown[])],
    },
    ...extra,
  });
  const [wf] = await world.create(project);
  await world.start(wf!.workflowId);
  const pid = Number(await waitForFile(pidFile, 60_000));
  return { workflowId: wf!.workflowId, pid, pidFile };
}

/** The update was refused by the workflow's validator with a reason matching `reason`. */
async function refused(p: Promise<unknown>, reason: RegExp) {
  await assert.rejects(p, (err: Error & { cause?: Error & { type?: string } }) => {
    assert.equal(err.cause?.type, AUTONOMOUS_REFUSED);
    assert.match(err.cause?.message ?? '', reason);
    return true;
  });
}

describe('pause and resume', () => {
  test('pause freezes the running agent process; resume continues it and the workflow completes', async () => {
    const { workflowId, pid } = await startWithSlowStep('implementation', 2500);
    const h = await handle(workflowId);
    const paused = await h.executeUpdate(pauseUpdate, { args: [{ actor }] });
    assert.equal(paused.status, 'paused');
    assert.equal(paused.paused_by, 'manual');
    const deadline = Date.now() + 10_000;
    while (processState(pid) !== 'T' && Date.now() < deadline) await sleep(50);
    assert.equal(processState(pid), 'T', 'the agent process is stopped (frozen)');
    const row = await world.row(workflowId);
    assert.equal(row.status, 'paused');
    assert.equal(row.previousStatus, 'developing');
    // Frozen time does not run the step on: still frozen a while later.
    await sleep(3000);
    assert.equal(processState(pid), 'T');
    const resumed = await h.executeUpdate(resumeUpdate, { args: [{ actor }] });
    assert.equal(resumed.status, 'developing');
    const done = await world.waitFor(workflowId, (r) => r.status === 'completed', 'completed');
    assert.equal(done.pausedBy, null);
    const impl = (await world.milestones(workflowId)).filter((m) => m.kind === 'implementation');
    assert.equal(impl.length, 1, 'the frozen step continued: no second attempt');
    assert.equal(impl[0]!.status, 'completed');
  });

  test('a second pause and a resume of a running workflow are refused by the update validator', async () => {
    const { workflowId, pid } = await startWithSlowStep('plan', 60_000);
    const h = await handle(workflowId);
    await refused(
      h.executeUpdate(resumeUpdate, { args: [{ actor }] }),
      /only a paused workflow can be resumed/,
    );
    await h.executeUpdate(pauseUpdate, { args: [{ actor }] });
    await refused(h.executeUpdate(pauseUpdate, { args: [{ actor }] }), /already paused/);
    await h.executeUpdate(stopUpdate, { args: [{ actor }] });
    assert.ok(await waitGone(pid), 'a frozen process is killed by stop');
  });
});

describe('stop', () => {
  test('stop kills the running agent, cancels the workflow and closes its lines', async () => {
    const { workflowId, pid } = await startWithSlowStep('implementation', 60_000);
    const h = await handle(workflowId);
    const r = await h.executeUpdate(stopUpdate, { args: [{ actor }] });
    assert.equal(r.status, 'cancelled');
    assert.ok(await waitGone(pid), 'the agent process is gone');
    const row = await world.row(workflowId);
    assert.equal(row.status, 'cancelled');
    assert.ok(row.completedAt);
    const outcome = await h.result();
    assert.equal(outcome.status, 'cancelled');
    const impl = (await world.milestones(workflowId)).find((m) => m.kind === 'implementation')!;
    assert.equal(impl.status, 'failed', 'the stopped step is not left in progress');
    assert.equal(impl.error, 'the step was stopped (cancelled)');
    const { db, t } = world.app.database;
    const sessions = await db.select().from(t.agentSessions);
    const lines = sessions.filter((s) => s.title?.includes(workflowId));
    assert.equal(lines.length, 4);
    assert.ok(
      lines.every((s) => s.status !== 'active'),
      lines.map((s) => s.status).join(','),
    );
    // The run is over: nothing reaches it any more (the API refuses from the row first).
    await assert.rejects(h.executeUpdate(resumeUpdate, { args: [{ actor }] }));
  });
});

describe('cancel a round, then feedback', () => {
  test('cancel at the plan milestone -> waiting; feedback is a milestone and planning runs again', async () => {
    const { workflowId, pid } = await startWithSlowStep('implementation@1', 60_000, {});
    const h = await handle(workflowId);
    const before = await world.milestones(workflowId);
    const plan = before.find((m) => m.kind === 'plan')!;
    const r = await h.executeUpdate(cancelRoundUpdate, {
      args: [{ actor, milestoneId: plan.id, milestonePhase: plan.phase }],
    });
    assert.equal(r.status, 'waiting');
    assert.ok(await waitGone(pid), 'the running step was terminated');
    const cancelled = (await world.milestones(workflowId)).filter((m) => m.sequence! > plan.sequence!);
    assert.ok(cancelled.length >= 2);
    assert.ok(cancelled.every((m) => m.isCancelled));
    assert.equal(cancelled.find((m) => m.kind === 'implementation')!.status, 'cancelled');
    await refused(
      h.executeUpdate(resumeWithFeedbackUpdate, { args: [{ actor, feedback: '   ' }] }),
      /feedback is required/,
    );
    const back = await h.executeUpdate(resumeWithFeedbackUpdate, {
      args: [{ actor, feedback: 'Say fixed, not broken' }],
    });
    assert.equal(back.status, 'planning');
    const done = await world.waitFor(workflowId, (w) => w.status === 'completed', 'completed');
    assert.equal(done.developmentRound, 2);
    const ms = await world.milestones(workflowId);
    const feedback = ms.filter((m) => m.kind === 'feedback');
    assert.equal(feedback.length, 1);
    assert.equal(feedback[0]!.content, 'Say fixed, not broken');
    assert.equal(feedback[0]!.status, 'completed');
    const live = ms.filter((m) => !m.isCancelled).map((m) => m.kind);
    assert.deepEqual(live.slice(0, 3), ['plan', 'feedback', 'plan'], 'steps after the target were cancelled');
    assert.equal(live.filter((k) => k === 'plan').length, 2, 'the plan was made again after feedback');
  });
});

/** The workflow has no activity pending and no step in progress. */
async function waitIdle(workflowId: string): Promise<void> {
  const h = await handle(workflowId);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const d = await h.describe();
    const ms = await world.milestones(workflowId);
    if (!d.raw.pendingActivities?.length && ms.every((m) => m.status !== 'in_progress')) return;
    if (Date.now() > deadline) throw new Error(`workflow ${workflowId} never went idle`);
    await sleep(100);
  }
}

describe('feedback hand-over', () => {
  // The feedback given after a cancel-round is in the very next step's prompt, every time: four
  // cancel-rounds in a row, alternately back to development (the running implementation) and back
  // to planning (the plan milestone). The fake CLI records every prompt it is given.
  test('four cancel-rounds with feedback in a row: each next step prompt carries its feedback', async () => {
    const promptFile = path.join(tmp, `prompts-${Date.now()}.jsonl`);
    const base = stepScript();
    const project = world.project({
      ...base,
      plan: { ...base.plan!, promptFile },
      implementation: { promptFile, steps: [{ call: 1 }, { sleep: 120_000 }] },
    });
    const [wf] = await world.create(project);
    const workflowId = wf!.workflowId;
    await world.start(workflowId);
    const h = await handle(workflowId);
    const prompts = async (kind: string, count: number) => {
      const deadline = Date.now() + 90_000;
      for (;;) {
        const lines = existsSync(promptFile) ? readFileSync(promptFile, 'utf8').trim().split('\n') : [];
        const of = lines
          .filter(Boolean)
          .map((l) => (JSON.parse(l) as { prompt: string }).prompt)
          .filter((p) => p.startsWith(`Step: ${kind} `));
        if (of.length >= count) return of;
        if (Date.now() > deadline) throw new Error(`no ${kind} prompt #${count} (${of.length} seen)`);
        await sleep(100);
      }
    };
    try {
      let implRuns = 1;
      let planRuns = 1;
      for (let i = 0; i < 4; i++) {
        await prompts('implementation', implRuns);
        const ms = await world.milestones(workflowId);
        const running = ms.filter((m) => m.kind === 'implementation' && m.status === 'in_progress').at(-1)!;
        const plan = ms.filter((m) => m.kind === 'plan' && !m.isCancelled).at(-1)!;
        const target = i % 2 === 0 ? running : plan;
        const r = await h.executeUpdate(cancelRoundUpdate, {
          args: [{ actor, milestoneId: target.id, milestonePhase: target.phase }],
        });
        assert.equal(r.status, 'waiting');
        // The cancelled step has wound down (its row finalized, no activity pending): the workflow
        // waits for feedback, as when a person takes a moment to write it.
        await waitIdle(workflowId);
        const feedback = `feedback ${i}: say fixed ${Math.random().toString(36).slice(2)}`;
        const back = await h.executeUpdate(resumeWithFeedbackUpdate, { args: [{ actor, feedback }] });
        assert.equal(back.status, i % 2 === 0 ? 'developing' : 'planning');
        const next =
          i % 2 === 0 ? await prompts('implementation', ++implRuns) : await prompts('plan', ++planRuns);
        assert.ok(next.at(-1)!.includes(feedback), `round ${i}: the next step's prompt lacks its feedback`);
        if (i % 2 === 1) implRuns++; // planning goes on to development
      }
    } finally {
      await h.executeUpdate(stopUpdate, { args: [{ actor }] }).catch(() => undefined);
    }
  });
});

describe('planning timeout', () => {
  test('planning past its deadline -> planning_timeout (agent killed); retry, then extend', async () => {
    const original = world.app.settings.autonomous.planning_timeout_seconds;
    world.app.settings.autonomous.planning_timeout_seconds = 2;
    try {
      const { workflowId, pid } = await startWithSlowStep('plan', 5000);
      const timedOut = await world.waitFor(
        workflowId,
        (r) => r.status === 'planning_timeout',
        'planning_timeout',
        30_000,
      );
      assert.ok(timedOut.planningDeadlineAt);
      assert.ok(await waitGone(pid), 'the planning agent was terminated');
      const h = await handle(workflowId);
      await refused(h.executeUpdate(resumeUpdate, { args: [{ actor }] }), /only a paused workflow/);
      // Retry resumes at the persisted phase with a fresh deadline (2 s again: it times out again).
      const retried = await h.executeUpdate(retryUpdate, { args: [{ actor }] });
      assert.equal(retried.status, 'planning');
      await world.waitFor(
        workflowId,
        (r) => r.status === 'planning_timeout',
        'planning_timeout again',
        30_000,
      );
      const extended = await h.executeUpdate(extendPlanningTimeoutUpdate, {
        args: [{ actor, seconds: 600 }],
      });
      assert.equal(extended.status, 'planning');
      const row = await world.row(workflowId);
      assert.ok(row.planningDeadlineAt!.getTime() > Date.now() + 500_000, 'the deadline moved');
      const done = await world.waitFor(workflowId, (r) => r.status === 'completed', 'completed', 90_000);
      assert.equal(done.retryCount, 1);
      const plans = (await world.milestones(workflowId)).filter((m) => m.kind === 'plan');
      assert.equal(plans.at(-1)!.status, 'completed');
      assert.ok(plans.length >= 3, `${plans.length} plan attempts`);
    } finally {
      world.app.settings.autonomous.planning_timeout_seconds = original;
    }
  });
});
