// The live activity stream of autonomous workflows (spec document 2, "Events" 2): what a running
// agent does (tool use, assistant text, usage, retries, system events, errors), published by the CLI
// runner (services/autonomous/runner/) and the orchestrator's activities, read by the SSE endpoint of
// the workflow (api/routes/autonomous/events-stream.ts).
//
// Across processes, the way remote-session output is (services/remote-output.ts): the runner runs in a
// worker and `npm run api` hosts none, so a process-local bus would leave every API instance's stream
// empty. An event is therefore stored (autonomous_activity_events, a gap-free `seq` per workflow that
// is the SSE `id:`) and announced on the remote bus (services/remote-bus.ts: in-process at once, other
// instances by NOTIFY on PostgreSQL; on SQLite a reader re-reads every ACTIVITY_RECHECK_MS). Readers
// follow the table by seq, so a reconnect with Last-Event-ID resumes without gaps or repeats.
//
// Publishing stays cheap for the CLI: publish() only queues; one writer per database handle stores
// everything queued within ACTIVITY_BATCH_MS in one transaction per workflow, so a burst of
// stream-json lines costs a few inserts, not one each (bench/autonomous-activity). Once stored, events go to this process's subscribers at once (with their seq)
// without a read. The stream is observability, not audit (milestones and sessions are the record):
// each event is cut to ACTIVITY_EVENT_MAX_CHARS, the queue is bounded (a stalled database drops the
// oldest), a failed write is logged and dropped, the last ACTIVITY_KEEP_PER_WORKFLOW events of a
// workflow are kept, older rows are purged by the retention schedule (PURGE_AFTER_DAYS) and the rows
// go with their workflow (foreign key, cascade).
//
// Subscribers are bounded per workflow: at most MAX_LISTENERS_PER_WORKFLOW each (a further subscribe
// is refused, so a client opening streams in a loop cannot grow the listener list without bound).
// Publishing never throws: a listener that throws is dropped from this publication only.
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type { DatabaseHandle } from '../../db/client.ts';
import { activityEventsRepository } from '../../db/repositories/autonomous/activity-events.ts';
import { remoteBus, topics } from '../remote-bus.ts';

export type ActivityEventType =
  | 'tool_use'
  | 'assistant_text'
  | 'usage'
  | 'retry'
  | 'system'
  | 'error'
  /** A milestone row was added or changed (the orchestrator's activities publish it). */
  | 'milestone_updated';

export interface AutonomousActivityEvent {
  workflowId: string;
  /** The session line the CLI runs on (main, review, test, verification); '' for orchestrator events. */
  line: string;
  type: ActivityEventType;
  /** ISO time the runner saw the line. */
  at: string;
  /** tool_use: the tool's name. */
  tool?: string;
  /** tool_use: the tool input, JSON, cut to a few hundred characters. */
  input?: string;
  /** assistant_text: never empty. error / system / retry: a short message. */
  text?: string;
  /** system: what happened (init, started, exited, paused, resumed, ...). retry: the attempt. */
  subtype?: string;
  attempt?: number;
  /** usage: the CLI's own report of the turn (observability; the metered figures come from the proxy). */
  usage?: { input_tokens: number; output_tokens: number; cache_tokens: number };
  /** system/init: the CLI's conversation id (the provider session bound to the line). */
  providerSessionId?: string;
  model?: string;
  /** milestone_updated: the row and its status now. system/status: the workflow's status now. */
  milestoneId?: number;
  status?: string;
  kind?: string;
  /** Set once stored: the event's place in the workflow's stream (the SSE `id:`). */
  seq?: number;
}

export type ActivityListener = (event: AutonomousActivityEvent) => void;

export const MAX_LISTENERS_PER_WORKFLOW = 32;

export class TooManyActivityListeners extends Error {
  constructor(workflowId: string) {
    super(`too many activity stream subscribers for workflow ${workflowId}`);
  }
}

export class ActivityBus {
  private readonly emitter = new EventEmitter();

  constructor(private readonly maxPerWorkflow = MAX_LISTENERS_PER_WORKFLOW) {
    // The bound is enforced in subscribe(); the emitter's own warning would only add noise.
    this.emitter.setMaxListeners(0);
  }

  /** Adds a subscriber for one workflow; returns the unsubscribe function. Throws past the bound. */
  subscribe(workflowId: string, listener: ActivityListener): () => void {
    if (this.emitter.listenerCount(workflowId) >= this.maxPerWorkflow)
      throw new TooManyActivityListeners(workflowId);
    this.emitter.on(workflowId, listener);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.emitter.off(workflowId, listener);
    };
  }

  listenerCount(workflowId: string): number {
    return this.emitter.listenerCount(workflowId);
  }

  publish(event: AutonomousActivityEvent): void {
    for (const listener of this.emitter.listeners(event.workflowId) as ActivityListener[]) {
      try {
        listener(event);
      } catch {
        // A broken subscriber must not stop the runner or the other subscribers.
      }
    }
  }
}

/** What the runner and the activities publish to (a stored bus, or a bare ActivityBus in a bench). */
export interface ActivityPublisher {
  publish(event: AutonomousActivityEvent): void;
  /** Resolves once everything published so far is stored and announced. */
  flush?(): Promise<void>;
}

export const ACTIVITY_EVENT_MAX_CHARS = 4000;
export const ACTIVITY_KEEP_PER_WORKFLOW = 1000;
/** Re-read interval of a reader when no wake-up crosses processes (SQLite). */
export const ACTIVITY_RECHECK_MS = 500;
const MAX_QUEUED = 10_000;
/** How long a published event may wait for others to share its write. */
const ACTIVITY_BATCH_MS = 20;

export interface StoredActivityBus extends ActivityPublisher {
  flush(): Promise<void>;
  /** This process's subscribers, given stored events (with `seq`) as soon as they are stored. */
  subscribe(workflowId: string, listener: ActivityListener): () => void;
  listenerCount(workflowId: string): number;
  /** Wakes when any process stored events of the workflow (a hint: read after your cursor). */
  onStored(workflowId: string, wake: () => void): () => void;
  /** Stored events with seq > afterSeq, in order. */
  after(workflowId: string, afterSeq: number, limit: number): Promise<AutonomousActivityEvent[]>;
  lastSeq(workflowId: string): Promise<number>;
  /** How often a reader must re-read by itself (undefined: every store wakes it, on any instance). */
  recheckMs: number | undefined;
}

const stored = new WeakMap<DatabaseHandle, StoredActivityBus>();

/** The stored bus of this database handle (the API and an in-process worker share it). */
export function activityBusFor(database: DatabaseHandle, logger?: Logger): StoredActivityBus {
  let bus = stored.get(database);
  if (!bus) {
    bus = createStoredBus(database, logger);
    stored.set(database, bus);
  }
  return bus;
}

/** The stored form of an event: its JSON, with long text and input cut so it fits the bound. */
export function activityPayload(e: AutonomousActivityEvent): string {
  const { seq: _seq, ...event } = e;
  let json = JSON.stringify(event);
  if (json.length <= ACTIVITY_EVENT_MAX_CHARS) return json;
  const room = Math.floor(ACTIVITY_EVENT_MAX_CHARS / 4);
  const cut = (v: string | undefined) => (v && v.length > room ? `${v.slice(0, room)}…` : v);
  json = JSON.stringify({ ...event, text: cut(event.text), input: cut(event.input) });
  if (json.length <= ACTIVITY_EVENT_MAX_CHARS) return json;
  const { workflowId, line, type, at } = event;
  return JSON.stringify({ workflowId, line, type, at, text: '(event too large to show)' });
}

function createStoredBus(database: DatabaseHandle, logger?: Logger): StoredActivityBus {
  const repo = activityEventsRepository(database);
  const remote = remoteBus(database);
  const local = new ActivityBus();
  let queue: AutonomousActivityEvent[] = [];
  let writing: Promise<void> | undefined;
  let scheduled = false;
  let closed = false;

  const store = async (batch: AutonomousActivityEvent[]) => {
    const byWorkflow = new Map<string, AutonomousActivityEvent[]>();
    for (const e of batch) {
      const list = byWorkflow.get(e.workflowId) ?? [];
      list.push(e);
      byWorkflow.set(e.workflowId, list);
    }
    for (const [workflowId, events] of byWorkflow) {
      try {
        const payloads = events.map(activityPayload);
        const seqs = await repo.append(workflowId, payloads, new Date(), ACTIVITY_KEEP_PER_WORKFLOW);
        for (const [i, seq] of seqs.entries())
          local.publish({ ...(JSON.parse(payloads[i]!) as AutonomousActivityEvent), seq });
        if (seqs.length) await remote.publish(topics.autonomousActivity(workflowId));
      } catch (err) {
        if (!closed) logger?.warn({ err, workflowId }, 'autonomous activity events not stored');
      }
    }
  };
  const write = (): Promise<void> => {
    scheduled = false;
    if (!writing && queue.length) {
      const batch = queue;
      queue = [];
      writing = store(batch).finally(() => {
        writing = undefined;
        if (queue.length) schedule();
      });
    }
    return writing ?? Promise.resolve();
  };
  // A moment later: lines arriving one by one within it go in one batch (one write per line would
  // cost a transaction each; on SQLite it would hold the event loop for each).
  const schedule = () => {
    if (scheduled || writing) return;
    scheduled = true;
    setTimeout(write, ACTIVITY_BATCH_MS);
  };

  const bus: StoredActivityBus = {
    publish(event) {
      if (closed) return;
      queue.push(event);
      if (queue.length > MAX_QUEUED) queue.splice(0, queue.length - MAX_QUEUED);
      schedule();
    },
    async flush() {
      while (writing || queue.length) await (writing ?? write());
    },
    subscribe: (workflowId, listener) => local.subscribe(workflowId, listener),
    listenerCount: (workflowId) => local.listenerCount(workflowId),
    onStored: (workflowId, wake) => remote.subscribe(topics.autonomousActivity(workflowId), wake),
    async after(workflowId, afterSeq, limit) {
      const out: AutonomousActivityEvent[] = [];
      for (const row of await repo.listAfter(workflowId, afterSeq, limit)) {
        try {
          out.push({ ...(JSON.parse(row.payload) as AutonomousActivityEvent), workflowId, seq: row.seq });
        } catch {
          // A row that does not parse is skipped (it cannot be shown).
        }
      }
      return out;
    },
    lastSeq: (workflowId) => repo.lastSeq(workflowId),
    recheckMs: database.dialect === 'postgres' ? undefined : ACTIVITY_RECHECK_MS,
  };
  // What is queued is stored before the handle closes (a worker shutting down after a step).
  const close = database.close.bind(database);
  database.close = async () => {
    await bus.flush().catch(() => undefined);
    closed = true;
    await close();
  };
  return bus;
}

/** The system event of a status change (the orchestrator's activities publish it after persisting). */
export function statusEvent(
  workflowId: string,
  from: string,
  next: { status: string; phase: string },
  at: Date,
): AutonomousActivityEvent {
  return {
    workflowId,
    line: '',
    type: 'system',
    subtype: 'status',
    status: next.status,
    text: `${from} -> ${next.status} (${next.phase})`,
    at: at.toISOString(),
  };
}
