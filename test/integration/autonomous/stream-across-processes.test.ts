// The autonomous live activity stream when the API and the worker are separate processes (`npm run api`
// hosts no worker; issue 27 item 2): the test's API instance starts without a worker, `bin/worker.ts`
// runs as its own process and runs the CLI, and the stream is read through the API with an SSE client.
// The CLI's events arrive while it runs; a client that disconnects mid-run and reconnects with
// Last-Event-ID gets exactly the events after that id (no gap, no repeat), which are also exactly what a
// full replay (`?from=1`) gives after them.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, test } from 'node:test';
import { PASSWORD } from '../../support/actors.ts';
import { login, type Session } from '../../support/session.ts';
import { openActivityStream, type Stream } from './sse-client.ts';
import {
  launchWorkerProcess,
  startWorkflowWorld,
  stepScript,
  UNCONFINED,
  type WorkflowWorld,
} from './workflow-support.ts';

let world: WorkflowWorld;
let owner: Session;
const children: ChildProcess[] = [];

before(async () => {
  world = await startWorkflowWorld({ worker: false, env: UNCONFINED });
  owner = await login(world.app.url, world.username, PASSWORD);
});
after(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await world?.close();
});

/** The stored (id-carrying) activity events a stream received, in order. */
const activity = (s: Stream) => s.events.filter((e) => e.id !== undefined && e.id !== '');

async function waitUntil(what: string, pred: () => boolean, ms = 120_000) {
  const deadline = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('the runner in a worker process streams through an API without a worker; Last-Event-ID resumes exactly', async () => {
  const worker = launchWorkerProcess(world, children, UNCONFINED);
  const project = world.project(
    stepScript({
      // The step pauses between its first words and the rest: the client disconnects in between.
      implementation: {
        steps: [
          { call: 1 },
          { text: 'reading the code first' },
          { tool: { name: 'Grep', input: { pattern: 'broken' } } },
          { sleep: 3000 },
          { write: { path: 'app.txt', content: 'fixed\n' } },
          { text: 'implemented' },
        ],
      },
    }),
  );
  const [wf] = await world.create(project);
  const id = wf!.workflowId;
  const first = await openActivityStream(world.app.url, id, owner);
  assert.equal(first.status, 200);
  await first.next('connected', 10_000);
  await world.start(id);

  // Live: the CLI's first words arrive while the step still runs (in the worker process).
  await waitUntil(
    'the first words of the implementation step',
    () => first.events.some((e) => e.event === 'assistant_text' && e.data.includes('reading the code first')),
    180_000,
  );
  const seen = activity(first);
  first.close();
  const lastId = seen.at(-1)!.id!;
  assert.ok(!seen.some((e) => e.data.includes('"text":"implemented"')), 'disconnected before the step ended');

  const row = await world.waitFor(id, (r) => ['completed', 'failed'].includes(r.status), 'an end', 180_000);
  assert.equal(row.status, 'completed', `${row.error}\n${worker.output().slice(-2000)}`);

  // Reconnect with the last id seen: everything after it, in order, nothing twice.
  const resumed = await openActivityStream(world.app.url, id, owner, { lastEventId: lastId });
  assert.equal(resumed.status, 200);
  await resumed.next('connected');
  const full = await openActivityStream(world.app.url, id, owner, { from: 1 });
  await full.next('connected');
  // Both replays end with the workflow's last status event (completed).
  const ended = (s: Stream) => () =>
    activity(s).some((e) => e.event === 'system' && e.data.includes('"status":"completed"'));
  await waitUntil('the resumed replay', ended(resumed), 30_000);
  await waitUntil('the full replay', ended(full), 30_000);
  resumed.close();
  full.close();

  const ids = (list: { id?: string }[]) => list.map((e) => Number(e.id));
  const after = activity(resumed);
  assert.ok(ids(after)[0]! > Number(lastId));
  const both = [...ids(seen), ...ids(after)];
  assert.equal(new Set(both).size, both.length, 'no event twice');
  for (let i = 1; i < both.length; i++) assert.ok(both[i]! > both[i - 1]!, 'in order');
  // No gap: the first stream plus the resumed one are what the full replay holds from the first id on.
  const fullList = activity(full).filter((e) => Number(e.id) >= ids(seen)[0]!);
  assert.deepEqual(
    [...seen, ...after].map((e) => [e.id, e.event, e.data]),
    fullList.map((e) => [e.id, e.event, e.data]),
  );
  // The worker's CLI events reached this API: text and tool use of the step, and its later words.
  assert.ok(
    seen.some((e) => e.event === 'tool_use' && e.data.includes('Grep')) ||
      after.some((e) => e.event === 'tool_use' && e.data.includes('Grep')),
  );
  assert.ok(after.some((e) => e.event === 'assistant_text' && e.data.includes('"text":"implemented"')));
  assert.ok(after.some((e) => e.event === 'milestone_updated'));
  for (const e of [...seen, ...after]) assert.equal(JSON.parse(e.data).workflow_id, id);
  worker.child.kill('SIGTERM');
});
