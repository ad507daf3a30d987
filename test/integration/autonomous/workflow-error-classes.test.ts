// Every error class of spec document 2 "Errors" 4 that a workflow decides on, end to end on the real
// worker (real proxy, mock provider, scripted fake CLI, Temporal dev server), one short workflow each:
//   - plan text that talks about rate limits, quotas and context length is normal text: the step
//     succeeds (classification reads structured facts only);
//   - provider allocation rate limit (429 rate_limit_error): retried with exponential backoff (the
//     delays chosen are read from the workflow history's timers), never paused, then succeeds;
//   - transient API errors (529 overloaded_error, 500 api_error): backoff until the retry window is
//     used, then failed;
//   - transient Git error (a branch ref lock held by another git process): the orchestrator's activity
//     retries; gone after a few seconds: the workflow goes on; held for good: failed after 5 attempts;
//   - runner failure / empty output: short fixed retries in the phase, failed at the limit;
//   - context overflow: the retry runs on the same stable line with a fresh transcript and the compact
//     prompt (seen by the CLI), the line is rebound; an overflow that persists fails after two runs;
//   - no new code: recorded as its own outcome;
//   - verifier infrastructure failure: 3 attempts, then paused (verification); unparsable verifier
//     output: 2 attempts, then paused.
// The four run outcomes (runner failure, empty output, context overflow, no new code) are asserted on
// the milestone rows and through GET /api/autonomous/workflows/:id/timeline. Retry delays are shortened
// through the `autonomous.*` retry settings (0.1 s steps), never real minutes.
// store-independent: the workflow's decisions on provider error classes; the rows its activities write are
//   covered on both stores by workflow-e2e, workflow-api-e2e, workflow-crash and the chaos tests
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { sessionLinesRepository } from '../../../db/repositories/autonomous/session-lines.ts';
import { workflowBranch } from '../../../domain/forge/branch-name.ts';
import { autonomousWorkspace } from '../../../services/autonomous/workspace.ts';
import { temporalWorkflowId } from '../../../workflows/autonomous/contract.ts';
import { PASSWORD } from '../../support/actors.ts';
import { api, login, type Session } from '../../support/session.ts';
import {
  type Script,
  startWorkflowWorld,
  stepScript,
  UNCONFINED,
  type WorkflowWorld,
} from './workflow-support.ts';

let world: WorkflowWorld;
let owner: Session;
const MARK_RATE = 'MARK-429-RATE-LIMIT';
const MARK_OVERLOADED = 'MARK-529-OVERLOADED';
const RATE_LIMITED = {
  status: 429,
  body: '{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}',
};
const MARK_SERVER = 'MARK-500-SERVER-ERROR';
const SERVER_ERROR = {
  status: 500,
  body: '{"type":"error","error":{"type":"api_error","message":"Internal server error"}}',
};
const OVERLOADED = {
  status: 529,
  body: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
};

before(async () => {
  world = await startWorkflowWorld({ env: UNCONFINED }); // pid and prompt files in the test's temp dir
  const a = world.app.settings.autonomous;
  a.transient_retry_delay_seconds = 0.1;
  a.api_backoff_initial_seconds = 0.1;
  const { db, t } = world.app.database;
  const [u] = await db.select().from(t.users).where(eq(t.users.id, world.userId));
  owner = await login(world.app.url, u!.username, PASSWORD);
});
after(async () => {
  await world?.close();
});

const ENDS = ['completed', 'failed', 'paused', 'cancelled'];

/** A project whose script also has top-level entries (the fake CLI's fallback) and a prompt log. */
function projectWith(script: Script, promptFile?: string) {
  const byStep = promptFile
    ? Object.fromEntries(Object.entries(script).map(([k, v]) => [k, { ...v, promptFile }]))
    : script;
  return world.project(script, { '.svc-fake/script.json': JSON.stringify({ byStep }) });
}

async function runToEnd(script: Script, opts: { promptFile?: string; watch?: (s: string) => void } = {}) {
  const [wf] = await world.create(projectWith(script, opts.promptFile));
  const id = wf!.workflowId;
  await world.start(id);
  const row = await world.waitFor(
    id,
    (r) => {
      opts.watch?.(r.status);
      return ENDS.includes(r.status);
    },
    'an end',
    150_000,
  );
  return { id, row, milestones: await world.milestones(id) };
}

/** The durations (s) of the timers the workflow started (its retry delays), in order. */
async function timerSeconds(id: string): Promise<number[]> {
  const client = await world.app.deps.temporal.client();
  const history = await client.workflow.getHandle(temporalWorkflowId(id)).fetchHistory();
  return (history.events ?? [])
    .flatMap((e) => {
      const t = e.timerStartedEventAttributes?.startToFireTimeout;
      return t ? [Number(t.seconds ?? 0) + (t.nanos ?? 0) / 1e9] : [];
    })
    .filter((s) => s < 60); // not the planning deadline's watchdog
}

/** The attempt number of the last start of the workflow's prepareAutonomousWorkspace activity. */
async function prepareAttempts(id: string): Promise<number> {
  const client = await world.app.deps.temporal.client();
  const history = await client.workflow.getHandle(temporalWorkflowId(id)).fetchHistory();
  const events = history.events ?? [];
  const scheduled = new Set(
    events
      .filter(
        (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'prepareAutonomousWorkspace',
      )
      .map((e) => String(e.eventId)),
  );
  return Math.max(
    0,
    ...events.flatMap((e) => {
      const st = e.activityTaskStartedEventAttributes;
      return st && scheduled.has(String(st.scheduledEventId)) ? [st.attempt ?? 0] : [];
    }),
  );
}

/** The first retry delay (s) of the workflow's preparation activity, as scheduled in its history. */
async function preparationRetryInitialSeconds(id: string): Promise<number> {
  const client = await world.app.deps.temporal.client();
  const history = await client.workflow.getHandle(temporalWorkflowId(id)).fetchHistory();
  const s = (history.events ?? []).find(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'prepareAutonomousWorkspace',
  )?.activityTaskScheduledEventAttributes?.retryPolicy?.initialInterval;
  return Number(s?.seconds ?? 0) + (s?.nanos ?? 0) / 1e9;
}

/** True once the preparation activity is pending a retry (its first attempt failed). */
async function preparationRetrying(id: string): Promise<boolean> {
  const client = await world.app.deps.temporal.client();
  const d = await client.workflow.getHandle(temporalWorkflowId(id)).describe();
  const p = d.raw.pendingActivities?.find((a) => a.activityType?.name === 'prepareAutonomousWorkspace');
  return (p?.attempt ?? 0) >= 2;
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const prompts = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { resumed: boolean; prompt: string });

async function timeline(id: string) {
  const r = await api(world.app.url, 'GET', `/api/autonomous/workflows/${id}/timeline`, { auth: owner });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return (r.body.milestones ?? r.body) as Array<{ kind: string; status: string; outcome: string | null }>;
}

const tmpFile = (name: string) =>
  path.join(world.app.settings.SVC_DATA_DIR, `${name}-${Math.random().toString(36).slice(2)}.jsonl`);

describe('classification reads structured facts only', () => {
  test('a plan that says "rate limit", "quota exceeded" and "context length" is a plan: the workflow completes', async () => {
    const words =
      '1. handle the API rate limit (429) 2. show "quota exceeded" 3. check context length exceeded / insufficient_quota';
    const { row, milestones } = await runToEnd(
      stepScript({
        plan: { steps: [{ call: 1 }, { text: words }] },
        test: { steps: [{ call: 1 }, { text: `tests pass; ${words}` }] },
      }),
    );
    assert.equal(row.status, 'completed', `${row.error}`);
    assert.equal(row.pausedBy, null);
    for (const m of milestones.filter((m) => m.kind !== 'merge')) {
      assert.equal(m.status, 'completed', `${m.kind}: ${m.error}`);
      assert.equal(m.outcome, 'ok', m.kind);
    }
    assert.equal(milestones.find((m) => m.kind === 'plan')!.content, words);
  });
});

describe('transient API errors: exponential backoff', () => {
  test('a provider rate limit (429) is retried with growing delays, never paused, and the step then succeeds', async () => {
    world.mock.setBehaviour({ markedErrors: { [MARK_RATE]: RATE_LIMITED } });
    const seen = new Set<string>();
    const [wf] = await world.create(
      projectWith(
        stepScript({
          implementation: {
            steps: [
              { callOrDie: MARK_RATE },
              { write: { path: 'app.txt', content: 'fixed\n' } },
              { text: 'ok' },
            ],
          },
        }),
      ),
    );
    const id = wf!.workflowId;
    try {
      await world.start(id);
      // Three refused attempts, then the provider serves again.
      for (;;) {
        const row = await world.row(id);
        seen.add(row.status);
        const failed = (await world.milestones(id)).filter(
          (m) => m.kind === 'implementation' && m.status === 'failed',
        );
        if (failed.length >= 3) break;
        assert.ok(!ENDS.includes(row.status), `ended early: ${row.status} ${row.error}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      world.mock.setBehaviour({ markedErrors: {} });
    }
    const row = await world.waitFor(
      id,
      (r) => {
        seen.add(r.status);
        return ENDS.includes(r.status);
      },
      'an end',
    );
    assert.equal(row.status, 'completed', `${row.error}`);
    assert.ok(!seen.has('paused'), `statuses seen: ${[...seen].join(',')}`);
    const impl = (await world.milestones(id)).filter((m) => m.kind === 'implementation');
    assert.ok(impl.length >= 4, impl.map((m) => m.status).join(','));
    assert.equal(impl.at(-1)!.status, 'completed');
    for (const m of impl.slice(0, -1)) {
      assert.equal(m.status, 'failed');
      assert.equal(m.outcome, 'runner_failure');
      assert.match(m.error ?? '', /^provider_rate_limit/);
    }
    // Exponential: 0.1 s, 0.2 s, 0.4 s ... (initial 0.1 s, factor 2).
    const delays = await timerSeconds(id);
    assert.deepEqual(delays.slice(0, 3), [0.1, 0.2, 0.4], `timers: ${delays.join(',')}`);
  });

  test('an overloaded provider (529) or a server error (500) is retried until the retry window is used, then failed', async () => {
    world.app.settings.autonomous.transient_api_retry_window_seconds = 0.2;
    world.mock.setBehaviour({ markedErrors: { [MARK_OVERLOADED]: OVERLOADED, [MARK_SERVER]: SERVER_ERROR } });
    const seen = new Set<string>();
    try {
      const runs = await Promise.all(
        [MARK_OVERLOADED, MARK_SERVER].map((mark) =>
          runToEnd(stepScript({ implementation: { steps: [{ callOrDie: mark }, { text: 'never' }] } }), {
            watch: (s) => seen.add(s),
          }),
        ),
      );
      assert.ok(!seen.has('paused'));
      for (const { id, row, milestones } of runs) {
        assert.equal(row.status, 'failed');
        assert.match(row.error ?? '', /transient_api: still failing after the 0.2 s retry window/);
        const impl = milestones.filter((m) => m.kind === 'implementation');
        // First failure: 0 + 0.1 s fits the 0.2 s window; the second (>= 0.1 s later) + 0.2 s does not.
        assert.deepEqual(
          impl.map((m) => [m.status, m.outcome, (m.error ?? '').split(':')[0]]),
          [
            ['failed', 'runner_failure', 'transient_api'],
            ['failed', 'runner_failure', 'transient_api'],
          ],
        );
        assert.deepEqual(await timerSeconds(id), [0.1]);
      }
    } finally {
      world.mock.setBehaviour({ markedErrors: {} });
      world.app.settings.autonomous.transient_api_retry_window_seconds = 1800;
    }
  });
});

describe('transient Git errors: short retries in the phase, failed at the limit', () => {
  test("a branch ref held by another git process is retried (the orchestrator's activity retries); held for good, the workflow fails", async () => {
    // Both workflows work on one project already imported by the forge; another git process holds the
    // lock of each one's branch ref when it starts (`git worktree add -b` cannot create the branch).
    const project = projectWith(stepScript());
    const [a] = await world.create(project);
    const [b] = await world.create(project);
    const rowA = await world.row(a!.workflowId);
    await autonomousWorkspace({ ...world.app, now: () => new Date() })
      .forgeOf(rowA)
      .then((f) => f.ensureRepository({ id: rowA.projectId!, path: rowA.projectPath! }));
    const bare = path.join(world.app.settings.dataDir, 'forge', `${rowA.projectId}.git`);
    const lockOf = (id: string) => path.join(bare, 'refs', 'heads', `${workflowBranch(id)}.lock`);
    for (const id of [a!.workflowId, b!.workflowId]) {
      mkdirSync(path.dirname(lockOf(id)), { recursive: true });
      writeFileSync(lockOf(id), '');
    }
    // One after the other: b's failing preparations write the shared bare repository (worktree admin
    // dirs), which a's Git-metadata integrity check would rightly see if they overlapped a's agent run.
    await world.start(a!.workflowId);
    // a's lock goes away once its preparation has failed at least once (a fixed wait raced a slow
    // start under load).
    await waitUntil(() => preparationRetrying(a!.workflowId), 60_000, "a's preparation failing once");
    rmSync(lockOf(a!.workflowId));
    const ra = await world.waitFor(a!.workflowId, (r) => ENDS.includes(r.status), 'an end', 150_000);
    assert.equal(ra.status, 'completed', `${ra.error}`);
    assert.ok((await prepareAttempts(a!.workflowId)) > 1, 'the preparation was retried');
    assert.equal(await preparationRetryInitialSeconds(a!.workflowId), 2, 'the default first delay');
    // b's lock stays: five attempts, then failed. Its retries wait 0.2 s, 0.4 s ... instead of the
    // default 2 s, 4 s, 8 s, 16 s (autonomous.preparation_retry_initial_seconds, read at its start).
    world.app.settings.autonomous.preparation_retry_initial_seconds = 0.2;
    try {
      await world.start(b!.workflowId);
      const rb = await world.waitFor(b!.workflowId, (r) => ENDS.includes(r.status), 'an end', 150_000);
      assert.equal(rb.status, 'failed');
      assert.match(rb.error ?? '', /lock/);
      assert.equal(await prepareAttempts(b!.workflowId), 5, 'five attempts, then failed');
      assert.equal(await preparationRetryInitialSeconds(b!.workflowId), 0.2);
    } finally {
      world.app.settings.autonomous.preparation_retry_initial_seconds = 2;
      rmSync(lockOf(b!.workflowId));
    }
  });
});

describe('distinct milestone outcomes', () => {
  test('runner failure, empty output and no new code: retried in the phase (the first two), failed at the limit, each its own outcome', async () => {
    const [failing, empty, noCode] = await Promise.all([
      runToEnd(stepScript({ implementation: { steps: [{ fail: 3 }] } })),
      runToEnd(stepScript({ implementation: { steps: [], final: '' } })),
      runToEnd(stepScript({ implementation: { steps: [{ call: 1 }, { text: 'nothing to change' }] } })),
    ]);
    // Short fixed retries: 5 attempts in all, 0.1 s apart, then failed.
    for (const [r, outcome] of [
      [failing, 'runner_failure'],
      [empty, 'empty_output'],
    ] as const) {
      assert.equal(r.row.status, 'failed');
      assert.match(r.row.error ?? '', new RegExp(`^${outcome}: 5 attempts failed`));
      const impl = r.milestones.filter((m) => m.kind === 'implementation');
      assert.deepEqual(
        impl.map((m) => [m.status, m.outcome]),
        Array.from({ length: 5 }, () => ['failed', outcome]),
      );
      assert.deepEqual(await timerSeconds(r.id), [0.1, 0.1, 0.1, 0.1]);
    }
    assert.equal(noCode.row.status, 'failed');
    assert.match(noCode.row.error ?? '', /^no_new_code/);
    const impl = noCode.milestones.filter((m) => m.kind === 'implementation');
    assert.deepEqual(
      impl.map((m) => [m.status, m.outcome]),
      [['completed', 'no_new_code']],
    );
    // The same outcomes through the milestones API.
    const api1 = (await timeline(failing.id)).filter((m) => m.kind === 'implementation');
    const api2 = (await timeline(empty.id)).filter((m) => m.kind === 'implementation');
    const api3 = (await timeline(noCode.id)).filter((m) => m.kind === 'implementation');
    assert.deepEqual(
      [api1[0]!.outcome, api2[0]!.outcome, api3[0]!.outcome],
      ['runner_failure', 'empty_output', 'no_new_code'],
    );
    assert.equal((await timeline(failing.id)).find((m) => m.kind === 'plan')!.outcome, 'ok');
  });

  test('context overflow: the retry runs the compact prompt on a fresh transcript of the same line; a persistent overflow fails', async () => {
    const log = tmpFile('overflow-prompts');
    const persistentLog = tmpFile('overflow-persistent');
    // The plan binds a conversation to the main line; implementation resumes it and overflows; the
    // fresh (not resumed) run succeeds.
    const recovering = stepScript({
      implementation: {
        steps: [{ call: 1 }, { write: { path: 'app.txt', content: 'fixed\n' } }, { text: 'done fresh' }],
        whenResumed: [{ call: 1 }, { overflow: true }],
      } as Script[string],
    });
    const [ok, persistent] = await Promise.all([
      runToEnd(recovering, { promptFile: log }),
      runToEnd(stepScript({ implementation: { steps: [{ call: 1 }, { overflow: true }] } }), {
        promptFile: persistentLog,
      }),
    ]);
    assert.equal(ok.row.status, 'completed', `${ok.row.error}`);
    const impl = ok.milestones.filter((m) => m.kind === 'implementation');
    assert.equal(impl.length, 1, 'one step, retried inside the run');
    assert.equal(impl[0]!.status, 'completed');
    assert.equal(impl[0]!.outcome, 'context_overflow_recovered');
    // Usage of the failed attempt is kept: one call overflowed, one call in the fresh run.
    assert.equal(impl[0]!.phaseRequestCount, 2);
    const implPrompts = prompts(log).filter((p) => p.prompt.startsWith('Step: implementation'));
    assert.equal(implPrompts.length, 2);
    assert.equal(implPrompts[0]!.resumed, true);
    assert.ok(!implPrompts[0]!.prompt.includes('exceeded the model context window'));
    assert.equal(implPrompts[1]!.resumed, false, 'a fresh transcript');
    assert.match(implPrompts[1]!.prompt, /exceeded the model context window and was discarded/);
    assert.match(implPrompts[1]!.prompt, /self-contained/);
    // The fresh conversation is bound to the same stable line (main): the report step, later on the
    // main line, resumes it.
    const line = await sessionLinesRepository(world.app.database).find(ok.id, 'main');
    assert.ok(line?.providerSessionId);
    const report = prompts(log).filter((p) => p.prompt.startsWith('Step: report'));
    assert.deepEqual(
      report.map((p) => p.resumed),
      [true],
    );
    // A step that overflows also with the compact prompt: one more fresh run, then failed.
    assert.equal(persistent.row.status, 'failed');
    assert.match(persistent.row.error ?? '', /^context_overflow: .*2 times/);
    const pImpl = persistent.milestones.filter((m) => m.kind === 'implementation');
    assert.deepEqual(
      pImpl.map((m) => [m.status, m.outcome]),
      [
        ['failed', 'context_overflow'],
        ['failed', 'context_overflow'],
      ],
    );
    const pPrompts = prompts(persistentLog).filter((p) => p.prompt.startsWith('Step: implementation'));
    // Run 1: the full prompt, then the runner's own compact retry; run 2: compact on a fresh transcript.
    assert.equal(pPrompts.length, 3);
    assert.deepEqual(
      pPrompts.map((p) => [p.resumed, p.prompt.includes('was discarded')]),
      [
        [true, false],
        [false, true],
        [false, true],
      ],
    );
    assert.equal(
      (await timeline(persistent.id)).filter((m) => m.kind === 'implementation')[0]!.outcome,
      'context_overflow',
    );
  });
});

describe('verifier failures', () => {
  test('a verifier that fails 3 times pauses (verification); unparsable output pauses after 2', async () => {
    const [infra, unparsable] = await Promise.all([
      runToEnd(stepScript({ acceptance_verification: { steps: [{ fail: 2 }] } })),
      runToEnd(
        stepScript({
          acceptance_verification: { steps: [{ call: 1 }, { text: 'I think it works (no verdict line)' }] },
        }),
      ),
    ]);
    assert.equal(infra.row.status, 'paused', `${infra.row.error}`);
    assert.equal(infra.row.pausedBy, 'verification');
    assert.equal(infra.row.verificationStatus, 'failed');
    // The verification attempt count is kept per verifier run (and shown by the API).
    const shown = await api(world.app.url, 'GET', `/api/autonomous/workflows/${infra.id}`, { auth: owner });
    assert.equal(shown.body.verification_attempts, 3, JSON.stringify(shown.body));
    assert.equal(shown.body.verification_status, 'failed');
    assert.equal(unparsable.row.verificationAttempts, 2);
    const iv = infra.milestones.filter((m) => m.kind === 'acceptance_verification');
    assert.deepEqual(
      iv.map((m) => [m.status, m.outcome, (m.error ?? '').split(':')[0]]),
      Array.from({ length: 3 }, () => ['failed', 'runner_failure', 'verifier_failure']),
    );
    assert.equal(unparsable.row.status, 'paused', `${unparsable.row.error}`);
    assert.equal(unparsable.row.pausedBy, 'verification');
    assert.equal(unparsable.row.verificationStatus, 'unparsable');
    const uv = unparsable.milestones.filter((m) => m.kind === 'acceptance_verification');
    assert.deepEqual(
      uv.map((m) => [m.status, m.outcome]),
      [
        ['completed', 'ok'],
        ['completed', 'ok'],
      ],
    );
  });
});
