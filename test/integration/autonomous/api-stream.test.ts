// GET /api/autonomous/workflows/:id/events/stream with a real SSE client (eventsource-parser over a
// streamed fetch) against the real API: `connected` at once, the visible keepalive (interval injected
// through SVC_AUTONOMOUS_STREAM_KEEPALIVE_MS), every bus event of the workflow (and only of that
// workflow) as `event: <type>`, empty assistant text and thinking estimates never sent, the bus
// subscription released when the client goes away, 429 past the bus's per-workflow cap, and the
// stored stream's ids: Last-Event-ID and `?from=` replay what is stored after / from a seq, then live.
// (Across processes: activity-bus.test.ts and stream-across-processes.test.ts.)
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type AutonomousActivityEvent,
  activityBusFor,
  MAX_LISTENERS_PER_WORKFLOW,
  type StoredActivityBus,
} from '../../../services/autonomous/activity-bus.ts';
import { api, type Session } from '../../support/session.ts';
import { type ApiWorld, createWorkflow, startApiWorld, terminateRuns } from './api-support.ts';
import { openActivityStream } from './sse-client.ts';

let w: ApiWorld;
let autonomousActivityBus: StoredActivityBus;
const created: string[] = [];

before(async () => {
  w = await startApiWorld({ env: { SVC_AUTONOMOUS_STREAM_KEEPALIVE_MS: '150' } });
  autonomousActivityBus = activityBusFor(w.app.database);
});
after(async () => {
  await terminateRuns(w, created);
  await w?.close();
});

const openStream = (workflowId: string, who: Session) => openActivityStream(w.app.url, workflowId, who);

const event = (workflowId: string, e: Partial<AutonomousActivityEvent>): AutonomousActivityEvent => ({
  workflowId,
  line: 'main',
  type: 'system',
  at: new Date().toISOString(),
  ...e,
});

test("connected at once, visible keepalives, the workflow's events; empty text and thinking never", async () => {
  const wf = await createWorkflow(w, w.owner);
  const other = await createWorkflow(w, w.owner);
  created.push(wf.id, other.id);
  const s = await openStream(wf.id, w.owner);
  assert.equal(s.status, 200);
  const connected = await s.next('connected', 2000);
  assert.equal(s.events[0]!.event, 'connected', 'connected comes first');
  assert.equal(JSON.parse(connected.data).workflow_id, wf.id);
  assert.equal(JSON.parse(connected.data).status, 'pending');
  await s.next('keepalive', 2000);
  await s.next('keepalive', 2000);
  assert.equal(autonomousActivityBus.listenerCount(wf.id), 1);

  const publish = (e: Partial<AutonomousActivityEvent>) => autonomousActivityBus.publish(event(wf.id, e));
  publish({ type: 'assistant_text', text: '   \n\t' });
  publish({ type: 'assistant_text', text: '' });
  publish({ type: 'system', subtype: 'thinking_estimate', text: '1200 thinking tokens' });
  autonomousActivityBus.publish(event(other.id, { type: 'assistant_text', text: 'not yours' }));
  publish({ type: 'assistant_text', text: 'Reading the parser' });
  publish({ type: 'tool_use', tool: 'Edit', input: '{"file":"src/a.ts"}' });
  publish({
    type: 'usage',
    usage: { input_tokens: 10, output_tokens: 5, cache_tokens: 0, thinking_tokens: 700 } as never,
  });
  publish({ type: 'retry', attempt: 2, text: 'provider overloaded' });
  publish({ type: 'error', text: 'the CLI exited with 1' });
  publish({ type: 'milestone_updated', line: '', milestoneId: 42, status: 'completed', kind: 'test' });
  publish({ type: 'system', subtype: 'exited' });

  await s.next('system', 3000);
  const got = s.events.filter((e) => e.event !== 'keepalive' && e.event !== 'connected');
  assert.deepEqual(
    got.map((e) => e.event),
    ['assistant_text', 'tool_use', 'usage', 'retry', 'error', 'milestone_updated', 'system'],
  );
  const data = got.map((e) => JSON.parse(e.data));
  assert.equal(data[0].text, 'Reading the parser');
  assert.equal(data[0].workflow_id, wf.id);
  assert.equal(data[0].line, 'main');
  assert.deepEqual([data[1].tool, data[1].input], ['Edit', '{"file":"src/a.ts"}']);
  assert.deepEqual(data[2].usage, { input_tokens: 10, output_tokens: 5, cache_tokens: 0 });
  assert.equal(data[3].attempt, 2);
  assert.deepEqual([data[5].milestone_id, data[5].status, data[5].kind], [42, 'completed', 'test']);
  assert.equal(data[6].subtype, 'exited');
  for (const e of s.events) assert.doesNotMatch(e.data, /thinking|not yours/);

  s.close();
  const deadline = Date.now() + 3000;
  while (autonomousActivityBus.listenerCount(wf.id) > 0 && Date.now() < deadline) await sleep(10);
  assert.equal(autonomousActivityBus.listenerCount(wf.id), 0, 'unsubscribed on close');
});

test('429 past the per-workflow subscriber cap; 401, 403 and 404 open nothing', async () => {
  const wf = await createWorkflow(w, w.owner);
  created.push(wf.id);
  const held = Array.from({ length: MAX_LISTENERS_PER_WORKFLOW }, () =>
    autonomousActivityBus.subscribe(wf.id, () => {}),
  );
  try {
    const r = await api(w.app.url, 'GET', `/api/autonomous/workflows/${wf.id}/events/stream`, {
      auth: w.owner,
    });
    assert.equal(r.status, 429);
    assert.match(r.body.error, /Too many activity streams/);
  } finally {
    for (const u of held) u();
  }
  for (const [who, status] of [
    [undefined, 401],
    [w.otherUser, 403],
    [w.otherTenantAdmin, 404],
  ] as const) {
    const r = await api(w.app.url, 'GET', `/api/autonomous/workflows/${wf.id}/events/stream`, {
      auth: who,
    });
    assert.equal(r.status, status);
  }
  assert.equal(autonomousActivityBus.listenerCount(wf.id), 0);
  const admin = await openStream(wf.id, w.tenantAdmin);
  assert.equal(admin.status, 200);
  await admin.next('connected');
  admin.close();
});

test('every event carries its seq as id; Last-Event-ID and ?from= replay the stored ones, then live', async () => {
  const wf = await createWorkflow(w, w.owner);
  created.push(wf.id);
  const say = (text: string) => autonomousActivityBus.publish(event(wf.id, { type: 'assistant_text', text }));
  say('one');
  say('two');
  say('three');
  await autonomousActivityBus.flush();
  const texts = (s: Awaited<ReturnType<typeof openStream>>) =>
    s.events.filter((e) => e.event === 'assistant_text').map((e) => [e.id, JSON.parse(e.data).text]);

  const plain = await openStream(wf.id, w.owner);
  await plain.next('connected');
  const resumed = await openActivityStream(w.app.url, wf.id, w.owner, { lastEventId: '1' });
  await resumed.next('connected');
  const from = await openActivityStream(w.app.url, wf.id, w.owner, { from: 3 });
  const beyond = await openActivityStream(w.app.url, wf.id, w.owner, { lastEventId: '99' });
  await from.next('connected');
  await beyond.next('connected');
  say('four');
  for (const s of [plain, resumed, from, beyond]) {
    await s.next('assistant_text', 3000);
    const deadline = Date.now() + 3000;
    while (!texts(s).some(([, t]) => t === 'four') && Date.now() < deadline) await sleep(10);
    s.close();
  }
  assert.deepEqual(texts(plain), [['4', 'four']], 'a plain connect starts with the next event');
  assert.deepEqual(texts(resumed), [
    ['2', 'two'],
    ['3', 'three'],
    ['4', 'four'],
  ]);
  assert.deepEqual(texts(from), [
    ['3', 'three'],
    ['4', 'four'],
  ]);
  assert.deepEqual(
    texts(beyond).map(([, t]) => t),
    ['one', 'two', 'three', 'four'],
    'an id past the end',
  );
  // The control frames carry no id (they do not move the client's Last-Event-ID).
  for (const e of plain.events.filter((x) => x.event === 'connected' || x.event === 'keepalive'))
    assert.equal(e.id, undefined);
});
