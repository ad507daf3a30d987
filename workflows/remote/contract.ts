// The contract between the API (and the quota enforcement activity) and the remote-session workflow
// (workflows/remote-session.ts): its id, input and state, the lifecycle updates, the end signal, the
// state query and the refusal type. Callers import these, never the workflow file.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { RemoteSessionStatus } from '../../domain/remote-session-state.ts';

export const remoteSessionWorkflowId = (sessionId: string) => `remote-session-${sessionId}`;

export interface RemoteSessionInput {
  sessionId: string;
  machineId: string;
  userId: number;
  tenantId: number | null;
  projectPath: string;
  cliTool: string;
  model: string | null;
  title: string | null;
  /** `{server}/api/remote/llm-proxy` as the agent should reach it. */
  proxyBaseUrl: string;
  /** Proxy-token session type (TTL: 4 h for `general`). */
  sessionType: string;
  /** State handed over by continue-as-new. */
  carried?: RemoteSessionState;
}

export interface RemoteSessionState {
  status: RemoteSessionStatus | 'starting';
  model: string | null;
  tokenIssuedAt: number;
  tokenExpiresAt: number;
  /** Counter behind the ids of the commands this workflow queues (idempotent activity retries). */
  seq: number;
}

export interface LifecycleResult {
  session_id: string;
  status: string;
  model: string | null;
  /** The agent confirmed the command (false: machine offline or slow; it acts on it when back). */
  agent_acknowledged: boolean;
  agent_response: Record<string, unknown> | null;
}

export type SessionEnd = { reason: 'cli_exited' | 'machine_removed'; exitCode?: number | null };

export const sessionBoundUpdate = defineUpdate<LifecycleResult>('remoteSession.bound');
export const pauseSessionUpdate = defineUpdate<LifecycleResult>('remoteSession.pause');
export const resumeSessionUpdate = defineUpdate<LifecycleResult>('remoteSession.resume');
export const stopSessionUpdate = defineUpdate<LifecycleResult>('remoteSession.stop');
export const setModelUpdate = defineUpdate<LifecycleResult, [{ model: string }]>('remoteSession.setModel');
export const rotateTokenUpdate = defineUpdate<LifecycleResult>('remoteSession.rotateToken');
export const sessionEndedSignal = defineSignal<[SessionEnd]>('remoteSession.ended');
export const sessionStateQuery = defineQuery<RemoteSessionState>('remoteSession.state');

/** Error type of a refused lifecycle change (the API answers 409). */
export const INVALID_TRANSITION = 'InvalidSessionTransition';
