// The autonomous workflow end to end (issue 13): a requirement goes preparation -> planning ->
// development -> pr_review -> report -> merge (CI red, repaired, green) -> acceptance verification ->
// completed on the local forge, with the scripted fake CLI calling the mock provider through our
// proxy. Real Temporal worker, real database (SQLite, or PostgreSQL with DATABASE_URL), real git.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MOCK_EXPECTED_USAGE } from '../../fixtures/mock-provider.ts';
import { modelCalls } from './runner-support.ts';
import { startWorkflowWorld, stepScript, type WorkflowWorld } from './workflow-support.ts';

let world: WorkflowWorld;
const PER_CALL = MOCK_EXPECTED_USAGE['anthropic-messages'];

before(async () => {
  world = await startWorkflowWorld();
});
after(async () => {
  await world?.close();
});

describe('autonomous workflow, happy path with a CI repair', () => {
  test('requirement -> merged, verified change; milestone usage adds up to the provider-counted tokens', async () => {
    // The first implementation leaves app.txt broken: CI fails, the CI repair fixes it.
    const project = world.project(
      stepScript({
        implementation: {
          steps: [{ call: 1 }, { write: { path: 'app.txt', content: 'still broken\n' } }, { text: 'done' }],
        },
      }),
    );
    const callsBefore = modelCalls(world.mock);
    const [wf] = await world.create(project);
    await world.start(wf!.workflowId);
    const row = await world.waitFor(
      wf!.workflowId,
      (r) => ['completed', 'failed', 'paused'].includes(r.status),
      'an end',
    );
    assert.equal(row.status, 'completed', `error: ${row.error}`);
    assert.equal(row.verificationStatus, 'confirmed');
    assert.ok(row.prNumber, 'a pull request was opened');
    assert.equal(row.ciRepairAttempts, 1);
    assert.equal(world.mergedFile(row.projectId!, 'app.txt'), 'fixed\n', 'the change is merged into main');

    const ms = await world.milestones(wf!.workflowId);
    assert.deepEqual(
      ms.map((m) => m.kind),
      [
        'plan',
        'plan_review',
        'implementation',
        'test',
        'pr_review',
        'report',
        'ci_diagnosis',
        'merge',
        'acceptance_verification',
      ],
    );
    assert.ok(
      ms.every((m) => m.status === 'completed'),
      ms.map((m) => `${m.kind}:${m.status}:${m.error}`).join(' '),
    );
    assert.deepEqual(
      ms.map((m) => m.sequence),
      ms.map((_, i) => i + 1),
    );
    const impl = ms.find((m) => m.kind === 'implementation')!;
    assert.match(impl.commitSha ?? '', /^[0-9a-f]{40}$/);
    assert.equal(impl.diffFiles, 1);

    // Every model call was metered on the line's token and attributed to exactly one milestone.
    const calls = modelCalls(world.mock) - callsBefore;
    const cliSteps = ms.filter((m) => m.sessionLine !== null);
    assert.equal(calls, cliSteps.length, 'one model call per CLI step');
    for (const m of cliSteps) {
      assert.equal(m.phaseRequestCount, 1, `${m.kind} request count`);
      assert.equal(m.phaseTotalTokens, PER_CALL.totalTokens, `${m.kind} tokens`);
    }
    const sum = ms.reduce((a, m) => a + m.phaseTotalTokens, 0);
    assert.equal(sum, calls * PER_CALL.totalTokens);
    assert.equal(row.totalTokens, sum, 'workflow total = sum of milestone increments');
    assert.equal(row.requestCount, calls);
    assert.equal(row.inputTokens, calls * PER_CALL.inputTokens);
    assert.equal(row.outputTokens, calls * PER_CALL.outputTokens);
  });
});
