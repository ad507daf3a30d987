// Durability: the worker is a separate process (`bin/worker.ts`) that is killed with SIGKILL while the
// agent is in the middle of the implementation step. A new worker process picks the workflow up: the
// runner activity is retried (the orphaned agent process group is killed first), the workflow resumes
// at the persisted phase, and no milestone is duplicated.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { processState, waitForFile, waitGone } from './runner-support.ts';
import {
  HAPPY_KINDS,
  launchWorkerProcess,
  startWorkflowWorld,
  stepScript,
  UNCONFINED,
  WORKER_KILL,
  type WorkflowWorld,
} from './workflow-support.ts';

let world: WorkflowWorld;
const children: ChildProcess[] = [];
const tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-wf-crash-'));

before(async () => {
  world = await startWorkflowWorld({ worker: false, env: UNCONFINED }); // a pid file in the test's temp dir
});
after(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await world?.close();
});

const launchWorker = () => launchWorkerProcess(world, children, { ...UNCONFINED, ...WORKER_KILL });

test('kill -9 of the worker mid-development resumes at the persisted phase with no duplicated milestone', async () => {
  const pidFile = path.join(tmp, 'impl.pid');
  const base = stepScript();
  const project = world.project({
    ...base,
    // The first run of the step writes its pid and sleeps; the retried run (resumed conversation) is quick.
    implementation: {
      pidFile,
      steps: [{ call: 1 }, { sleep: 60_000 }],
      whenResumed: [
        { call: 1 },
        { write: { path: 'app.txt', content: 'fixed\n' } },
        { text: 'implemented after the crash' },
      ],
    } as never,
  });
  const first = launchWorker();
  const [wf] = await world.create(project);
  await world.start(wf!.workflowId);
  const agentPid = Number(await waitForFile(pidFile, 90_000));
  const before = await world.row(wf!.workflowId);
  assert.equal(before.status, 'developing');
  first.child.kill('SIGKILL');
  await new Promise((r) => first.child.once('exit', r));
  // The orphaned agent keeps sleeping until the next worker's runner kills its group.
  assert.notEqual(processState(agentPid), null);
  await sleep(500);
  const second = launchWorker();
  const row = await world.waitFor(
    wf!.workflowId,
    (r) => ['completed', 'failed'].includes(r.status),
    'an end',
    150_000,
  );
  assert.equal(row.status, 'completed', `${row.error}\n${second.output().slice(-2000)}`);
  assert.ok(await waitGone(agentPid, 5000), 'the orphaned agent process was killed');
  const ms = await world.milestones(wf!.workflowId);
  assert.deepEqual(
    ms.map((m) => m.kind),
    HAPPY_KINDS,
  );
  const impl = ms.find((m) => m.kind === 'implementation')!;
  assert.equal(impl.status, 'completed');
  assert.equal(impl.attempt, 1, 'the same milestone row, not a second attempt');
  assert.equal(impl.content, 'implemented after the crash');
  // Both runs' model calls were metered on the one milestone (the crashed run's usage is kept). Each
  // run makes one call; on a loaded machine the new worker's attempt can itself time out (heartbeat) and
  // run once more, adding its own call, so this is a lower bound.
  assert.ok(impl.phaseRequestCount >= 2, `${impl.phaseRequestCount} calls metered`);
  second.child.kill('SIGTERM');
});
