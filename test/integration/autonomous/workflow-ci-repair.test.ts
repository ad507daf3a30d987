// CI repair end to end on the local forge (issue 15 item 3-4; spec document 2 "Limits": 5 automatic
// CI repair attempts, 6 CI log diagnostics polls; "Errors" 4; the fix-validation rule of "Execution
// isolation"): a CI that needs three repairs is repaired on attempt 3; one that never passes fails
// after 5 attempts; a failure that comes back with the same fingerprint is not repaired twice; a
// repair that changes nothing is not a fix (a PR head moved only by a main-branch sync is not one
// either: test/integration/forge/ci-fix-validation.test.ts, since nothing may move the branch while
// the agent runs: the Git metadata integrity check would stop it); a failed check without usable log evidence is polled 6 times, then fails with a permission hint.
// Real Temporal worker, real database (SQLite, or PostgreSQL with DATABASE_URL), real git, fake CLI.
// store-independent: the workflow's CI-repair loop; the rows its activities write are covered on both
//   stores by workflow-e2e, workflow-api-e2e, workflow-crash and the chaos tests
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { PASSWORD } from '../../support/actors.ts';
import { api, login, type Session } from '../../support/session.ts';
import { type Script, startWorkflowWorld, stepScript, type WorkflowWorld } from './workflow-support.ts';

let world: WorkflowWorld;
let owner: Session;

before(async () => {
  world = await startWorkflowWorld({ env: { SVC_AUTONOMOUS__CI_LOG_POLL_SECONDS: '0.2' } });
  const { db, t } = world.app.database;
  const [u] = await db.select().from(t.users).where(eq(t.users.id, world.userId));
  owner = await login(world.app.url, u!.username, PASSWORD);
});
after(async () => {
  await world?.close();
});

/** CI passes once app.txt holds `need` lines with "fix"; it prints the file otherwise (a new signature each time). */
const countingCi = (need: number) =>
  `n=$(grep -c fix app.txt)\nif [ "$n" -lt ${need} ]; then echo "app.txt has too few fixes:"; cat app.txt; exit 1; fi\necho ok\n`;
const appendFix: Script[string] = {
  steps: [{ call: 1 }, { append: { path: 'app.txt', content: 'fix\n' } }, { text: 'appended a fix' }],
};
const startBroken: Script = {
  implementation: {
    steps: [{ call: 1 }, { write: { path: 'app.txt', content: 'start\n' } }, { text: 'done' }],
  },
};

async function run(script: Script, files: Record<string, string>) {
  const [wf] = await world.create(world.project(stepScript(script), files));
  await world.start(wf!.workflowId);
  const row = await world.waitFor(
    wf!.workflowId,
    (r) => ['completed', 'failed', 'paused'].includes(r.status),
    'an end',
    180_000,
  );
  const ms = await world.milestones(wf!.workflowId);
  // The CI state as the API shows it (spec "Autonomous workflow records": CI repair attempt count,
  // failure fingerprints and diagnostics state).
  const read = await api(world.app.url, 'GET', `/api/autonomous/workflows/${wf!.workflowId}`, {
    auth: owner,
  });
  assert.equal(read.status, 200, JSON.stringify(read.body));
  const shown = read.body as {
    ci_repair_attempts: number;
    ci_failure_fingerprints: string[];
    ci_diagnostics_state: { status: string; evidence: string; polls: number; max_polls: number } | null;
  };
  return { row, ms, repairs: ms.filter((m) => m.kind === 'ci_diagnosis'), shown };
}

/** The diagnostics state without its time. */
const diagnostics = (s: { ci_diagnostics_state: Record<string, unknown> | null }) => {
  const { checked_at, ...rest } = s.ci_diagnostics_state ?? {};
  assert.ok(!Number.isNaN(Date.parse(String(checked_at))), `checked_at ${checked_at}`);
  return rest;
};

describe('CI repair', () => {
  test('repaired on attempt 3: each repair is a new failure, the third makes CI pass', async () => {
    const { row, repairs, shown } = await run(
      { ...startBroken, ci_diagnosis: appendFix },
      { 'ci.sh': countingCi(3) },
    );
    assert.equal(row.status, 'completed', `error: ${row.error}`);
    assert.equal(row.ciRepairAttempts, 3);
    // Three different failures (the log differs each time): three fingerprints, in order.
    assert.equal(shown.ci_repair_attempts, 3);
    assert.equal(shown.ci_failure_fingerprints.length, 3, JSON.stringify(shown.ci_failure_fingerprints));
    assert.ok(shown.ci_failure_fingerprints.every((f) => /^ci:[0-9a-f]{16}$/.test(f)));
    assert.equal(new Set(shown.ci_failure_fingerprints).size, 3, 'each failure its own fingerprint');
    assert.deepEqual(diagnostics(shown), { status: 'diagnosed', evidence: 'ok', polls: 0, max_polls: 6 });
    assert.equal(repairs.length, 3);
    assert.deepEqual(
      repairs.map((m) => [m.title, m.status]),
      [
        ['CI repair 1', 'completed'],
        ['CI repair 2', 'completed'],
        ['CI repair 3', 'completed'],
      ],
    );
    assert.ok(
      repairs.every((m) => /^[0-9a-f]{40}$/.test(m.commitSha ?? '')),
      'each repair committed',
    );
    assert.equal(world.mergedFile(row.projectId!, 'app.txt'), 'start\nfix\nfix\nfix\n');
  });

  test('failing after 5 attempts (autonomous.ci_repair_attempts) with a clear error', async () => {
    const { row, repairs } = await run(
      { ...startBroken, ci_diagnosis: appendFix },
      { 'ci.sh': countingCi(10) },
    );
    assert.equal(row.status, 'failed');
    assert.equal(row.currentPhase, 'merge');
    assert.equal(row.error, 'automatic CI repair attempts exhausted (5)');
    assert.equal(row.ciRepairAttempts, 5);
    assert.equal(repairs.length, 5);
    assert.equal(world.mergedFile(row.projectId!, 'app.txt'), 'broken\n', 'nothing merged');
  });

  test('an identical failure fingerprint is not repaired twice: it fails visibly', async () => {
    // The repair changes the PR (a notes file) but not what CI complains about.
    const { row, repairs } = await run(
      {
        ...startBroken,
        ci_diagnosis: {
          steps: [{ call: 1 }, { write: { path: 'notes.txt', content: 'tried\n' } }, { text: 'tried' }],
        },
      },
      { 'ci.sh': 'echo "app.txt is not fixed"\nexit 1\n' },
    );
    assert.equal(row.status, 'failed');
    assert.equal(row.error, 'the same failure persists after repair: ci');
    assert.equal(row.ciRepairAttempts, 1);
    assert.equal(repairs.length, 1);
  });

  test('a repair that changes nothing is not a fix', async () => {
    const { row, repairs } = await run(
      { ...startBroken, ci_diagnosis: { steps: [{ call: 1 }, { text: 'I looked at it' }] } },
      {},
    );
    assert.equal(row.status, 'failed');
    assert.equal(
      row.error,
      'ci_repair_not_a_fix: CI repair 1 is not a fix: the repair changed nothing: the PR head did not move',
    );
    assert.equal(repairs.length, 1);
    assert.equal(repairs[0]!.commitSha, null);
  });

  test('a failed check without log evidence is polled 6 times, then fails with a permission hint', async () => {
    const { row, repairs, shown } = await run(startBroken, { 'ci.sh': 'exit 3\n' });
    assert.equal(row.status, 'failed');
    assert.match(row.error ?? '', /^insufficient CI evidence after 6 polls: .*permissions/);
    assert.equal(row.ciRepairAttempts, 0, 'no repair attempt without evidence');
    assert.deepEqual(shown.ci_failure_fingerprints, [], 'nothing was handed to repair');
    assert.deepEqual(diagnostics(shown), {
      status: 'insufficient',
      evidence: 'logs_not_ready',
      polls: 6,
      max_polls: 6,
    });
    assert.equal(repairs.length, 0);
  });
});
