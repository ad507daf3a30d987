// What the autonomous workflow reads from the database when a run starts (services/autonomous/
// workflow-context.ts loads it). Serialisable and secret-free: it enters workflow history as an
// activity result. A type of its own below services/ so the workflow code can name it.
import type { RetryTiming } from './limits.ts';
import type { WorkflowState } from './transitions.ts';

export interface AutonomousContext {
  state: WorkflowState;
  requirement: string;
  title: string;
  cliTool: string;
  model: string | null;
  batchId: string | null;
  /** Forked at a milestone: its branch starts from the fork point's commit, not from main. */
  forked: boolean;
  worktreePath: string | null;
  prNumber: number | null;
  /** The latest completed, not cancelled plan. */
  planText: string | null;
  /** Feedback milestones not cancelled, oldest first. */
  feedback: string[];
  round: number;
  ciRepairAttempts: number;
  planningDeadlineAt: number | null;
  limits: {
    acceptanceEnabled: boolean;
    planningTimeoutSeconds: number;
    taskTimeoutSeconds: number;
    ciRepairAttempts: number;
    /** Retry timing of the error classes (settings `autonomous.*`; domain/autonomous/limits.ts). */
    retry?: RetryTiming;
    /** autonomous.heartbeat_timeout_seconds; absent: 15 s for a CLI step, 20 s for a CI run. */
    heartbeatTimeoutSeconds?: number;
  };
}
