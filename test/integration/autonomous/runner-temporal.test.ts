// The runner as a real Temporal activity (a worker on the test dev server running a minimal probe
// workflow, runner-workflow.ts): it heartbeats with a small progress detail, a workflow cancellation
// reaches it and kills the CLI's process group, and no proxy token appears in heartbeat details,
// workflow histories or the captured logs.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createAutonomousRunnerActivities } from '../../../activities/autonomous/run-cli.ts';
import type { RunCliResult } from '../../../services/autonomous/runner/run-cli.ts';
import { temporalAddress } from '../../support/harness.ts';
import {
  newWorkflow,
  type RunnerWorld,
  sandboxPid,
  startRunnerWorld,
  waitForFile,
  waitGone,
  writeScript,
} from './runner-support.ts';

let world: RunnerWorld;
let worker: Worker;
let running: Promise<void>;
let client: Client;
let connection: Connection;
const taskQueue = `runner-${randomBytes(4).toString('hex')}`;

before(async () => {
  world = await startRunnerWorld();
  try {
    const quiet = () => {};
    Runtime.install({
      logger: { log: quiet, trace: quiet, debug: quiet, info: quiet, warn: quiet, error: quiet } as never,
    });
  } catch {
    // Already installed by another worker of this process.
  }
  worker = await Worker.create({
    connection: await NativeConnection.connect({ address: temporalAddress() }),
    namespace: 'default',
    taskQueue,
    workflowsPath: path.resolve('test/integration/autonomous/runner-workflow.ts'),
    activities: createAutonomousRunnerActivities({
      database: world.app.database,
      settings: world.app.settings,
      now: () => new Date(),
    }),
  });
  running = worker.run();
  connection = await Connection.connect({ address: temporalAddress() });
  client = new Client({ connection, namespace: 'default' });
});
after(async () => {
  worker?.shutdown();
  await running;
  await connection?.close();
  await world?.close();
});

/** Every string and byte payload of a value (history, describe output), decoded, in one text. */
function allText(value: unknown, out: string[] = [], seen = new Set<unknown>()): string[] {
  if (value === null || value === undefined) return out;
  if (typeof value === 'string') out.push(value);
  else if (value instanceof Uint8Array) out.push(Buffer.from(value).toString('utf8'));
  else if (typeof value === 'object' && !seen.has(value)) {
    seen.add(value);
    for (const v of Object.values(value as Record<string, unknown>)) allText(v, out, seen);
  }
  return out;
}

describe('autonomous runner as a Temporal activity', () => {
  test('heartbeats a small detail, and a workflow cancellation kills the process group', async () => {
    const { workflowId, worktree } = await newWorkflow(world);
    writeScript(worktree, {
      pidFile: '.svc-fake/pid',
      steps: [
        { child: '.svc-fake/child.pid' },
        { call: 1 },
        { write: { path: '.svc-fake/called', content: 'yes' } },
        { sleep: 120_000 },
      ],
    });
    const handle = await client.workflow.start('runnerProbeWorkflow', {
      taskQueue,
      workflowId: `runner-probe-${workflowId}`,
      args: [{ workflowId, line: 'main', prompt: 'work', worktreePath: worktree, cliTool: 'cli_beta' }],
    });
    const pid = await sandboxPid(path.join(worktree, '.svc-fake/pid'), worktree);
    const child = await sandboxPid(path.join(worktree, '.svc-fake/child.pid'), worktree);
    await waitForFile(path.join(worktree, '.svc-fake/called'));

    let detail: Record<string, unknown> | undefined;
    // Generous: the step sleeps 120 s, and a loaded CI machine (load 20) once took longer than 15 s.
    const deadline = Date.now() + 60_000;
    while (!detail && Date.now() < deadline) {
      const d = await handle.describe();
      const payload = d.raw.pendingActivities?.[0]?.heartbeatDetails?.payloads?.[0]?.data;
      if (payload) detail = JSON.parse(Buffer.from(payload).toString('utf8'));
      else await sleep(200);
    }
    assert.ok(detail, 'a heartbeat detail was recorded');
    // The pid reported is the run's own process (the sandbox's outer one): the CLI descends from it.
    const ancestors: number[] = [];
    for (let p = pid; p > 1 && ancestors.length < 8; ) {
      p = Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0);
      ancestors.push(p);
    }
    assert.ok(ancestors.includes(detail.pid as number), `${detail.pid} is not an ancestor of the CLI ${pid}`);
    assert.equal(detail.state, 'running');
    assert.equal(detail.attempt, 1);
    assert.deepEqual(Object.keys(detail).sort(), ['attempt', 'lines', 'pid', 'run_ms', 'state']);

    await handle.cancel();
    await assert.rejects(handle.result(), (err: unknown) => err instanceof WorkflowFailedError);
    assert.ok(await waitGone(pid), 'the CLI is gone');
    assert.ok(await waitGone(child), 'its grandchild is gone');

    const history = await handle.fetchHistory();
    const text = allText(history).join('\n');
    assert.ok(
      text.includes('ActivityTaskCancel') ||
        history.events!.some((e) => e.activityTaskCanceledEventAttributes),
    );
    assert.ok(!text.includes('svcpt_'), 'a proxy token is in the history');
    assert.ok(!world.app.logs.join('\n').includes('svcpt_'), 'a proxy token is in the logs');
  });

  test('a completed run returns its structured result; nothing secret in the history', async () => {
    const { workflowId, worktree } = await newWorkflow(world);
    writeScript(worktree, { steps: [{ call: 2 }], final: 'done' });
    const result: RunCliResult = await client.workflow.execute('runnerProbeWorkflow', {
      taskQueue,
      workflowId: `runner-probe-${workflowId}`,
      args: [
        { workflowId, line: 'review', prompt: 'review it', worktreePath: worktree, cliTool: 'cli_beta' },
      ],
    });
    assert.equal(result.outcome, 'ok');
    assert.equal(result.finalText, 'done');
    assert.equal(result.usage.requests, 2);
    const history = await client.workflow.getHandle(`runner-probe-${workflowId}`).fetchHistory();
    assert.ok(!allText(history).join('\n').includes('svcpt_'));
  });
});
