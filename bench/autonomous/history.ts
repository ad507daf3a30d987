// The pure part of the autonomous-workflow benchmark: one workflow's Temporal history (the events of
// `client.workflow.getHandle(id).fetchHistory()`) turned into a timeline, the timeline into the figures
// the benchmark prints, the most workflows running at once, and the CLI processes' lifetimes from the
// runner's activity-bus events. Temporal event times have nanosecond precision and come from one clock
// (the server's), unlike the rows' timestamps (whole seconds on SQLite), so every workflow duration here
// is taken from the history.
//
// Spans: an activity's dispatch is ActivityTaskScheduled -> ActivityTaskStarted and its execution
// ActivityTaskStarted -> ActivityTaskCompleted/Failed (the started event of the last attempt carries
// the time that attempt started); a workflow task's dispatch is WorkflowTaskScheduled -> Started and
// its execution Started -> Completed.
import type { AutonomousActivityEvent } from '../../services/autonomous/activity-bus.ts';

/** A Long from the proto objects, or a plain number (tests). */
type Num = number | { toNumber(): number };
interface Ts {
  seconds?: Num | null;
  nanos?: number | null;
}
interface Ref {
  scheduledEventId?: Num | null;
}
/** The fields of temporal.api.history.v1.IHistoryEvent this module reads. */
export interface HistoryEventLike {
  eventId?: Num | null;
  eventTime?: Ts | null;
  workflowExecutionStartedEventAttributes?: object | null;
  workflowExecutionCompletedEventAttributes?: object | null;
  workflowExecutionContinuedAsNewEventAttributes?: object | null;
  workflowTaskScheduledEventAttributes?: object | null;
  workflowTaskStartedEventAttributes?: object | null;
  workflowTaskCompletedEventAttributes?: (Ref & { startedEventId?: Num | null }) | null;
  activityTaskScheduledEventAttributes?: { activityType?: { name?: string | null } | null } | null;
  activityTaskStartedEventAttributes?: Ref | null;
  activityTaskCompletedEventAttributes?:
    | (Ref & { result?: { payloads?: { data?: Uint8Array | null }[] | null } | null })
    | null;
  activityTaskFailedEventAttributes?: Ref | null;
  markerRecordedEventAttributes?: {
    markerName?: string | null;
    details?: Record<string, { payloads?: { data?: Uint8Array | null }[] | null } | null> | null;
    failure?: object | null;
  } | null;
}

export interface ActivitySpan {
  name: string;
  scheduledMs: number;
  startedMs: number;
  endedMs: number;
  ok: boolean;
  /** The completed activity's first result payload, parsed as JSON (undefined when absent or not JSON). */
  result?: unknown;
}

export interface Timeline {
  events: number;
  startedMs: number;
  /** WorkflowExecutionCompleted; null when the run did not complete (failed, continued-as-new, running). */
  completedMs: number | null;
  continuedAsNew: boolean;
  activities: ActivitySpan[];
  workflowTasks: { scheduledMs: number; startedMs: number; completedMs: number }[];
}

/** The marker a local activity's outcome is recorded under (Temporal's core SDK). */
export const LOCAL_ACTIVITY_MARKER = 'core_local_activity';
interface LocalActivityMarkerData {
  activity_type?: string;
  complete_time?: Ts | null;
  original_schedule_time?: Ts | null;
}

const num = (n: Num | null | undefined): number => (n == null ? 0 : typeof n === 'number' ? n : n.toNumber());
/** An event time in epoch milliseconds (fractional: sub-millisecond precision kept). */
export const eventMs = (t: Ts | null | undefined): number => num(t?.seconds) * 1000 + (t?.nanos ?? 0) / 1e6;

function payloadJson(data: Uint8Array | null | undefined): unknown {
  if (!data) return undefined;
  try {
    return JSON.parse(Buffer.from(data).toString('utf8'));
  } catch {
    return undefined;
  }
}

export function timelineOf(events: readonly HistoryEventLike[]): Timeline {
  const scheduled = new Map<number, { name: string; at: number }>();
  const started = new Map<number, number>();
  const wftScheduled = new Map<number, number>();
  const wftStarted = new Map<number, number>();
  const tl: Timeline = {
    events: events.length,
    startedMs: Number.NaN,
    completedMs: null,
    continuedAsNew: false,
    activities: [],
    workflowTasks: [],
  };
  for (const e of events) {
    const at = eventMs(e.eventTime);
    const id = num(e.eventId);
    if (e.workflowExecutionStartedEventAttributes) tl.startedMs = at;
    else if (e.workflowExecutionCompletedEventAttributes) tl.completedMs = at;
    else if (e.workflowExecutionContinuedAsNewEventAttributes) tl.continuedAsNew = true;
    else if (e.workflowTaskScheduledEventAttributes) wftScheduled.set(id, at);
    else if (e.workflowTaskStartedEventAttributes) wftStarted.set(id, at);
    else if (e.workflowTaskCompletedEventAttributes) {
      const a = e.workflowTaskCompletedEventAttributes;
      const s = wftScheduled.get(num(a.scheduledEventId));
      if (s !== undefined)
        tl.workflowTasks.push({
          scheduledMs: s,
          startedMs: wftStarted.get(num(a.startedEventId)) ?? s,
          completedMs: at,
        });
    } else if (e.activityTaskScheduledEventAttributes)
      scheduled.set(id, { name: e.activityTaskScheduledEventAttributes.activityType?.name ?? '?', at });
    else if (e.activityTaskStartedEventAttributes)
      started.set(num(e.activityTaskStartedEventAttributes.scheduledEventId), at);
    else if (e.markerRecordedEventAttributes?.markerName === LOCAL_ACTIVITY_MARKER) {
      // A local activity ran inside a workflow task: its marker carries its type, its schedule and
      // completion times (the worker's clock) and its result.
      const m = e.markerRecordedEventAttributes;
      const data = payloadJson(m.details?.data?.payloads?.[0]?.data) as LocalActivityMarkerData | undefined;
      if (!data?.activity_type) continue;
      const ended = data.complete_time ? eventMs(data.complete_time) : at;
      const span: ActivitySpan = {
        name: data.activity_type,
        scheduledMs: data.original_schedule_time ? eventMs(data.original_schedule_time) : ended,
        startedMs: data.original_schedule_time ? eventMs(data.original_schedule_time) : ended,
        endedMs: ended,
        ok: !m.failure,
      };
      const result = payloadJson(m.details?.result?.payloads?.[0]?.data);
      if (result !== undefined) span.result = result;
      tl.activities.push(span);
    } else {
      const end = e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes;
      if (!end) continue;
      const sid = num(end.scheduledEventId);
      const s = scheduled.get(sid);
      if (!s) continue;
      const span: ActivitySpan = {
        name: s.name,
        scheduledMs: s.at,
        startedMs: started.get(sid) ?? s.at,
        endedMs: at,
        ok: Boolean(e.activityTaskCompletedEventAttributes),
      };
      const result = payloadJson(e.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data);
      if (result !== undefined) span.result = result;
      tl.activities.push(span);
    }
  }
  return tl;
}

/** The activities whose time is the agent's own, and the CI command's. */
export const CLI_ACTIVITY = 'runAutonomousCli';
export const CI_ACTIVITY = 'runAutonomousCi';
export const CLAIM_ACTIVITY = 'claimAutonomousSlot';
/** The activity that writes each state transition to the row (the last one frees the slot). */
export const TRANSITION_ACTIVITY = 'persistAutonomousTransition';

export interface WorkflowFigures {
  /** Start of the Temporal run -> the slot claim that started it (queued / pending time). */
  queueMs: number;
  /** The slot claim's completion -> WorkflowExecutionCompleted (the final transition's effects included). */
  runningMs: number;
  /**
   * The slot claim's completion -> the last transition written (the row's started_at -> completed_at):
   * while the slot is held. The final transition's effects (workspace cleanup, closing the session
   * lines, waking pending workflows) run after it.
   */
  slot: { from: number; to: number };
  /**
   * Inside the slot for certain: the claim wrote the row before its completion event and the last
   * transition writes it after its start event, so [claim completed, last transition started] lies
   * within the time the row held the slot (the limit check counts overlaps of these).
   */
  slotInner: { from: number; to: number };
  cliMs: number;
  cliRuns: number;
  ciMs: number;
  ciRuns: number;
  /** (runningMs - cliMs - ciMs) / transitions. */
  overheadPerTransitionMs: number;
  /** Where the non-CLI, non-CI running time went (sums over the running window). */
  breakdown: {
    /** Execution time of the other activities (git, database, forge), by activity type. */
    activityExecMs: Record<string, number>;
    activityCount: Record<string, number>;
    /** Scheduled -> started of every activity (task-queue dispatch latency). */
    activityQueueMs: number;
    /** Scheduled -> started of every workflow task (dispatch to the worker). */
    workflowTaskQueueMs: number;
    /** Started -> completed of every workflow task (the worker runs the workflow code, the server records it). */
    workflowTaskExecMs: number;
    workflowTasks: number;
  };
  events: number;
}

/**
 * The figures of one completed workflow. `transitions` is the number of phase transitions the run
 * made (7 on the happy path: preparation -> planning -> development -> pr_review -> report -> merge ->
 * acceptance_verification -> completed). Throws when the run has no successful slot claim or did not
 * complete: the caller reports such a workflow as not completed.
 */
export function figuresOf(tl: Timeline, transitions: number): WorkflowFigures {
  if (tl.completedMs === null) throw new Error('the workflow run did not complete');
  const claim = [...tl.activities]
    .reverse()
    .find(
      (a) =>
        a.name === CLAIM_ACTIVITY && (a.result as { outcome?: string } | undefined)?.outcome === 'started',
    );
  if (!claim) throw new Error('no successful slot claim in the history');
  const from = claim.endedMs;
  const to = tl.completedMs;
  const running = tl.activities.filter((a) => a.scheduledMs >= from && a.endedMs <= to);
  const sum = (xs: ActivitySpan[]) => xs.reduce((s, a) => s + (a.endedMs - a.startedMs), 0);
  const cli = running.filter((a) => a.name === CLI_ACTIVITY);
  const ci = running.filter((a) => a.name === CI_ACTIVITY);
  const activityExecMs: Record<string, number> = {};
  const activityCount: Record<string, number> = {};
  for (const a of running) {
    activityCount[a.name] = (activityCount[a.name] ?? 0) + 1;
    if (a.name === CLI_ACTIVITY || a.name === CI_ACTIVITY) continue;
    activityExecMs[a.name] = (activityExecMs[a.name] ?? 0) + (a.endedMs - a.startedMs);
  }
  const wfts = tl.workflowTasks.filter((w) => w.scheduledMs >= from && w.completedMs <= to);
  const runningMs = to - from;
  const lastTransition = running.filter((a) => a.name === TRANSITION_ACTIVITY).at(-1);
  return {
    queueMs: from - tl.startedMs,
    runningMs,
    slot: { from, to: lastTransition?.endedMs ?? to },
    slotInner: { from, to: lastTransition?.startedMs ?? to },
    cliMs: sum(cli),
    cliRuns: cli.length,
    ciMs: sum(ci),
    ciRuns: ci.length,
    overheadPerTransitionMs: (runningMs - sum(cli) - sum(ci)) / transitions,
    breakdown: {
      activityExecMs,
      activityCount,
      activityQueueMs: running.reduce((s, a) => s + (a.startedMs - a.scheduledMs), 0),
      workflowTaskQueueMs: wfts.reduce((s, w) => s + (w.startedMs - w.scheduledMs), 0),
      workflowTaskExecMs: wfts.reduce((s, w) => s + (w.completedMs - w.startedMs), 0),
      workflowTasks: wfts.length,
    },
    events: tl.events,
  };
}

/** Activities that run git on the local forge (activities/autonomous/orchestration.ts forgeCall); CI aside. */
export const FORGE_ACTIVITIES: ReadonlySet<string> = new Set([
  'prepareAutonomousWorkspace',
  'commitAutonomousChanges',
  'openAutonomousPullRequest',
  'pushAutonomousChanges',
  'autonomousChangeSummary',
  'decideAutonomousMerge',
  'syncAutonomousPullRequest',
  'mergeAutonomousPullRequest',
  'beginAutonomousConflictResolution',
  'completeAutonomousConflictResolution',
  'abortAutonomousConflictResolution',
  'prepareAutonomousVerification',
  'cleanupAutonomousWorkspace',
]);

/**
 * The overhead per transition split three ways: Temporal round trips (activity and workflow task
 * dispatch, workflow task execution), the forge's git activities, and the other (database
 * bookkeeping) activities; `rest` is what none of them covers (gaps between events).
 */
export function overheadSplit(
  f: WorkflowFigures,
  transitions: number,
): { temporal: number; forge: number; database: number; rest: number } {
  const b = f.breakdown;
  let forge = 0;
  let database = 0;
  for (const [name, ms] of Object.entries(b.activityExecMs)) {
    if (FORGE_ACTIVITIES.has(name)) forge += ms;
    else database += ms;
  }
  const temporal = b.activityQueueMs + b.workflowTaskQueueMs + b.workflowTaskExecMs;
  const overhead = f.overheadPerTransitionMs * transitions;
  return {
    temporal: temporal / transitions,
    forge: forge / transitions,
    database: database / transitions,
    rest: (overhead - temporal - forge - database) / transitions,
  };
}

/** The most workflows running at once, from their [from, to) running windows. */
export function maxOverlap(windows: readonly { from: number; to: number }[]): number {
  const points = windows.flatMap((w) => [
    { at: w.from, d: 1 },
    { at: w.to, d: -1 },
  ]);
  // At equal times an end comes before a start: a freed slot is taken by the next workflow.
  points.sort((a, b) => a.at - b.at || a.d - b.d);
  let now = 0;
  let max = 0;
  for (const p of points) {
    now += p.d;
    max = Math.max(max, now);
  }
  return max;
}

/** CLI process lifetimes from `system` started/exited events, per workflow and line (in order). */
export class ProcessClock {
  private open = new Map<string, number>();
  readonly spans = new Map<string, number[]>();
  constructor(private readonly now: () => number = () => performance.timeOrigin + performance.now()) {}

  on = (e: AutonomousActivityEvent): void => {
    if (e.type !== 'system' && e.type !== 'error') return;
    const key = `${e.workflowId}/${e.line}`;
    if (e.type === 'system' && e.subtype === 'started') this.open.set(key, this.now());
    else if (e.subtype === 'exited') {
      const from = this.open.get(key);
      if (from === undefined) return;
      this.open.delete(key);
      const list = this.spans.get(e.workflowId) ?? [];
      list.push(this.now() - from);
      this.spans.set(e.workflowId, list);
    }
  };

  total(workflowId: string): { ms: number; runs: number } {
    const xs = this.spans.get(workflowId) ?? [];
    return { ms: xs.reduce((a, b) => a + b, 0), runs: xs.length };
  }
}
