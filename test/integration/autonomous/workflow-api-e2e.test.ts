// What a user of the HTTP API sees of one autonomous workflow, end to end on the real worker: create it
// with POST /api/autonomous/workflows, watch its live activity stream (SSE: connected first, the
// agent's text, status changes and milestone_updated events), follow it to completion, read the
// milestone timeline whose per-phase tokens add up to the workflow's totals, then fork it at its
// implementation milestone into a new workflow with its own worktree that also completes.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { eq } from 'drizzle-orm';
import { PASSWORD } from '../../support/actors.ts';
import { api, login, type Session } from '../../support/session.ts';
import { openActivityStream } from './sse-client.ts';
import { startWorkflowWorld, stepScript, type WorkflowWorld } from './workflow-support.ts';

let world: WorkflowWorld;
let owner: Session;

before(async () => {
  world = await startWorkflowWorld();
  const { db, t } = world.app.database;
  const [u] = await db.select().from(t.users).where(eq(t.users.id, world.userId));
  owner = await login(world.app.url, u!.username, PASSWORD);
});
after(async () => {
  await world?.close();
});

async function get(path: string) {
  const r = await api(world.app.url, 'GET', path, { auth: owner });
  assert.equal(r.status, 200, `${path}: ${JSON.stringify(r.body)}`);
  return r.body;
}

async function untilOver(id: string) {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const wf = await get(`/api/autonomous/workflows/${id}`);
    const body = wf.workflow ?? wf;
    if (['completed', 'failed', 'cancelled', 'paused'].includes(body.status)) return body;
    assert.ok(Date.now() < deadline, `workflow ${id} is still ${body.status}`);
    await sleep(200);
  }
}

const milestonesOf = async (id: string) => {
  const body = await get(`/api/autonomous/workflows/${id}/timeline`);
  return (body.milestones ?? body) as Array<Record<string, unknown> & { id: number; kind: string }>;
};

test('create over HTTP, watch the stream, read the timeline, fork at a milestone', async () => {
  const project = world.project(stepScript());
  const created = await api(world.app.url, 'POST', '/api/autonomous/workflows', {
    auth: owner,
    body: { requirement: 'Make app.txt say fixed', project_path: project, cli_tool: 'cli_beta' },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id: string = created.body.id ?? created.body.workflow?.id;
  assert.match(id, /^aw-/);
  const stream = await openActivityStream(world.app.url, id, owner);
  assert.equal(stream.status, 200);

  const wf = await untilOver(id);
  assert.equal(wf.status, 'completed', wf.error);
  await sleep(300);
  stream.close();
  assert.equal(stream.events[0]?.event, 'connected', 'connected comes first');
  const types = new Set(stream.events.map((e) => e.event));
  for (const t of ['milestone_updated', 'assistant_text', 'system'])
    assert.ok(types.has(t), `a ${t} event arrived (${[...types].join(', ')})`);
  for (const e of stream.events.filter((x) => x.event === 'assistant_text'))
    assert.ok(JSON.parse(e.data).text.trim().length > 0, 'no empty assistant text');
  const statuses = stream.events
    .filter((e) => e.event === 'system' && JSON.parse(e.data).subtype === 'status')
    .map((e) => JSON.parse(e.data).status);
  assert.deepEqual(statuses, [
    'preparing',
    'planning',
    'developing',
    'pr_review',
    'reporting',
    'merging',
    'verification_pending',
    'completed',
  ]);
  assert.ok(!stream.events.some((e) => e.data.includes('real-anthropic-key')), 'no secret on the stream');

  const ms = await milestonesOf(id);
  const sum = ms.reduce((a, m) => a + Number(m.phase_total_tokens), 0);
  assert.ok(sum > 0);
  assert.equal(Number(wf.total_tokens), sum, 'per-phase tokens add up to the workflow total');

  const impl = ms.find((m) => m.kind === 'implementation')!;
  const diff = await get(`/api/autonomous/workflows/${id}/milestones/${impl.id}/diff`);
  assert.match(JSON.stringify(diff), /app\.txt/);
  const session = await get(`/api/autonomous/workflows/${id}/milestones/${impl.id}/session`);
  assert.ok(JSON.stringify(session).length > 10);

  const forked = await api(
    world.app.url,
    'POST',
    `/api/autonomous/workflows/${id}/milestones/${impl.id}/fork`,
    {
      auth: owner,
      body: {},
    },
  );
  assert.equal(forked.status, 201, JSON.stringify(forked.body));
  const forkId: string = forked.body.id ?? forked.body.workflow?.id;
  const fork = await untilOver(forkId);
  assert.equal(fork.status, 'completed', fork.error);
  assert.equal(fork.forked_from_workflow_id, id);
  assert.notEqual(fork.preferred_worktree_path, wf.preferred_worktree_path);
  const forkMs = await milestonesOf(forkId);
  assert.deepEqual(
    forkMs.slice(0, 3).map((m) => m.kind),
    ['plan', 'plan_review', 'implementation'],
    'the history up to the fork point was copied',
  );
  assert.equal(Number(forkMs[2]!.phase_total_tokens), Number(impl.phase_total_tokens));
  const forks = await get(`/api/autonomous/workflows/${id}/forks`);
  assert.ok(JSON.stringify(forks).includes(forkId));
});
