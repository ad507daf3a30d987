// The pure helpers of bench/autonomous (history.ts): a Temporal history becomes the right timeline and
// figures (running window from the successful slot claim, CLI and CI time, overhead per transition,
// the breakdown), the overlap count and the CLI process clock. No timings are tested.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  eventMs,
  figuresOf,
  type HistoryEventLike,
  maxOverlap,
  overheadSplit,
  ProcessClock,
  timelineOf,
} from '../../bench/autonomous/history.ts';

const T0 = 1_700_000_000_000;
/** An event at T0 + ms, with its id; times as a Long-like seconds and nanos, like the proto objects. */
function ev(id: number, ms: number, attrs: Partial<HistoryEventLike>): HistoryEventLike {
  const at = T0 + ms;
  const seconds = Math.floor(at / 1000);
  return {
    eventId: id,
    eventTime: { seconds: { toNumber: () => seconds }, nanos: (at - seconds * 1000) * 1e6 },
    ...attrs,
  };
}
const json = (v: unknown) => ({ payloads: [{ data: new TextEncoder().encode(JSON.stringify(v)) }] });

/** A history: a claim that finds the pool full, one that starts, a CLI run, a CI run, a commit, completion. */
function history(opts: { complete?: boolean; started?: boolean } = {}): HistoryEventLike[] {
  let id = 0;
  const events: HistoryEventLike[] = [ev(++id, 0, { workflowExecutionStartedEventAttributes: {} })];
  const wft = (at: number, run: number, done: number) => {
    const s = ++id;
    events.push(ev(s, at, { workflowTaskScheduledEventAttributes: {} }));
    const st = ++id;
    events.push(ev(st, run, { workflowTaskStartedEventAttributes: {} }));
    events.push(
      ev(++id, done, { workflowTaskCompletedEventAttributes: { scheduledEventId: s, startedEventId: st } }),
    );
  };
  const activity = (name: string, at: number, run: number, done: number, result?: unknown) => {
    const s = ++id;
    events.push(ev(s, at, { activityTaskScheduledEventAttributes: { activityType: { name } } }));
    events.push(ev(++id, run, { activityTaskStartedEventAttributes: { scheduledEventId: s } }));
    events.push(
      ev(++id, done, {
        activityTaskCompletedEventAttributes: {
          scheduledEventId: s,
          ...(result ? { result: json(result) } : {}),
        },
      }),
    );
  };
  wft(0, 1, 2);
  activity('claimAutonomousSlot', 2, 3, 5, { outcome: 'full', status: 'pending' });
  wft(5, 6, 8);
  activity('claimAutonomousSlot', 8, 9, 10, {
    outcome: opts.started === false ? 'full' : 'started',
    status: 'planning',
  });
  wft(10, 12, 15);
  activity('runAutonomousCli', 15, 20, 120);
  wft(120, 122, 125);
  activity('runAutonomousCi', 125, 126, 226);
  wft(226, 227, 230);
  activity('commitAutonomousChanges', 230, 232, 262);
  activity('commitAutonomousChanges', 262, 263, 273);
  activity('persistAutonomousTransition', 273, 274, 280);
  activity('cleanupAutonomousWorkspace', 280, 281, 290);
  wft(290, 292, 310);
  if (opts.complete !== false) events.push(ev(++id, 310, { workflowExecutionCompletedEventAttributes: {} }));
  return events;
}

test('event times keep sub-millisecond precision from Long seconds and nanos', () => {
  assert.equal(eventMs({ seconds: { toNumber: () => 1000 }, nanos: 500_000 }), 1_000_000.5);
  assert.equal(eventMs({ seconds: 2, nanos: 0 }), 2000);
  assert.equal(eventMs(null), 0);
});

test('a history becomes a timeline of activities and workflow tasks', () => {
  const tl = timelineOf(history());
  assert.equal(tl.events, history().length);
  assert.equal(tl.startedMs, T0);
  assert.equal(tl.completedMs, T0 + 310);
  assert.deepEqual(
    tl.activities.map((a) => a.name),
    [
      'claimAutonomousSlot',
      'claimAutonomousSlot',
      'runAutonomousCli',
      'runAutonomousCi',
      'commitAutonomousChanges',
      'commitAutonomousChanges',
      'persistAutonomousTransition',
      'cleanupAutonomousWorkspace',
    ],
  );
  assert.deepEqual(tl.activities[1]!.result, { outcome: 'started', status: 'planning' });
  const cli = tl.activities[2]!;
  assert.deepEqual([cli.scheduledMs - T0, cli.startedMs - T0, cli.endedMs - T0, cli.ok], [15, 20, 120, true]);
  assert.deepEqual(
    tl.workflowTasks.map((w) => [w.startedMs - w.scheduledMs, w.completedMs - w.startedMs]),
    [
      [1, 1],
      [1, 2],
      [2, 3],
      [2, 3],
      [1, 3],
      [2, 18],
    ],
  );
});

test('figures: the running window starts at the successful claim; overhead excludes CLI and CI time', () => {
  const f = figuresOf(timelineOf(history()), 2);
  assert.equal(f.queueMs, 10);
  assert.equal(f.runningMs, 300);
  assert.equal(f.cliMs, 100);
  assert.equal(f.cliRuns, 1);
  assert.equal(f.ciMs, 100);
  assert.equal(f.ciRuns, 1);
  assert.equal(f.overheadPerTransitionMs, (300 - 100 - 100) / 2);
  // The slot is held until the last transition is written; its effects (cleanup) run after.
  assert.deepEqual(f.slot, { from: T0 + 10, to: T0 + 280 });
  assert.deepEqual(f.slotInner, { from: T0 + 10, to: T0 + 274 });
  assert.deepEqual(f.breakdown.activityExecMs, {
    commitAutonomousChanges: 40,
    persistAutonomousTransition: 6,
    cleanupAutonomousWorkspace: 9,
  });
  assert.deepEqual(f.breakdown.activityCount, {
    runAutonomousCli: 1,
    runAutonomousCi: 1,
    commitAutonomousChanges: 2,
    persistAutonomousTransition: 1,
    cleanupAutonomousWorkspace: 1,
  });
  // Only what runs after the claim: 5 + 1 + 2 + 1 + 1 + 1 activity dispatch; four workflow tasks.
  assert.equal(f.breakdown.activityQueueMs, 11);
  assert.equal(f.breakdown.workflowTasks, 4);
  assert.equal(f.breakdown.workflowTaskQueueMs, 2 + 2 + 1 + 2);
  assert.equal(f.breakdown.workflowTaskExecMs, 3 + 3 + 3 + 18);
  assert.equal(f.events, history().length);
});

test('the overhead splits into Temporal round trips, forge (git) and database activities, and the rest', () => {
  const f = figuresOf(timelineOf(history()), 2);
  // Overhead 100 ms: Temporal 11 + 7 + 27 = 45, forge 40 + 9 = 49, database 6, rest 0.
  assert.deepEqual(overheadSplit(f, 2), { temporal: 45 / 2, forge: 49 / 2, database: 6 / 2, rest: 0 });
});

test('figures refuse a run that did not complete or never claimed a slot', () => {
  assert.throws(() => figuresOf(timelineOf(history({ complete: false })), 7), /did not complete/);
  assert.throws(() => figuresOf(timelineOf(history({ started: false })), 7), /no successful slot claim/);
});

test('maxOverlap counts workflows running at once; a freed slot is taken at the same instant', () => {
  assert.equal(maxOverlap([]), 0);
  assert.equal(
    maxOverlap([
      { from: 0, to: 10 },
      { from: 10, to: 20 },
    ]),
    1,
  );
  assert.equal(
    maxOverlap([
      { from: 0, to: 10 },
      { from: 5, to: 20 },
      { from: 6, to: 7 },
      { from: 8, to: 30 },
    ]),
    3,
  );
});

test('the process clock pairs started and exited per workflow and line', () => {
  let now = 0;
  const clock = new ProcessClock(() => now);
  const at = '2026-01-01T00:00:00.000Z';
  const e = (workflowId: string, line: string, type: 'system' | 'error', subtype: string) =>
    clock.on({ workflowId, line, type, subtype, at });
  e('a', 'main', 'system', 'started');
  now = 5;
  e('b', 'review', 'system', 'started');
  now = 30;
  e('a', 'main', 'system', 'exited');
  now = 32;
  e('b', 'review', 'error', 'exited'); // a failed run ends with an error event
  e('a', 'test', 'system', 'exited'); // no start seen: ignored
  assert.deepEqual(clock.total('a'), { ms: 30, runs: 1 });
  assert.deepEqual(clock.total('b'), { ms: 27, runs: 1 });
  assert.deepEqual(clock.total('c'), { ms: 0, runs: 0 });
});
