// The live activity stream of autonomous workflows (spec document 2, "Events" 2): what a running
// agent does (tool use, assistant text, usage, retries, system events, errors), published by the CLI
// runner (services/autonomous/runner/) and read by the SSE endpoint of the workflow.
//
// Process-local on purpose: the spec calls the stream observability only, not an audit log (the
// milestones and sessions are the persisted record), so an event reaches the subscribers of the
// process whose worker runs the CLI and is lost otherwise. Keyed by workflow id: one EventEmitter
// event name per workflow, at most MAX_LISTENERS_PER_WORKFLOW subscribers each (a further subscribe
// is refused, so a client opening streams in a loop cannot grow the listener list without bound).
// Publishing never throws: a listener that throws is dropped from this publication only.
import { EventEmitter } from 'node:events';

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

/** The process's bus. */
export const autonomousActivityBus = new ActivityBus();

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
