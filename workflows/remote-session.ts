// One workflow per remote session (workflowId = remoteSessionWorkflowId(sessionId)) owns its lifecycle:
// it binds the session to its machine, keeps the proxy token fresh (rotation timer), applies pause,
// resume, stop and model changes one at a time, and finishes when the CLI exits or the machine goes.
// Its input and history carry ids and times only: tokens are issued and sealed inside activities.
// Its ids, input, updates, signals and query are in workflows/remote/contract.ts (the API imports those).
import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { AgentAck, RemoteSessionActivities } from '../activities/remote-session.ts';
import {
  isTerminal,
  type RemoteSessionStatus,
  rotationDueAt,
  transition,
} from '../domain/remote-session-state.ts';
import {
  INVALID_TRANSITION,
  type LifecycleResult,
  pauseSessionUpdate,
  type RemoteSessionInput,
  type RemoteSessionState,
  resumeSessionUpdate,
  rotateTokenUpdate,
  type SessionEnd,
  sessionBoundUpdate,
  sessionEndedSignal,
  sessionStateQuery,
  setModelUpdate,
  stopSessionUpdate,
} from './remote/contract.ts';

const acts = proxyActivities<RemoteSessionActivities>({
  startToCloseTimeout: '60 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 10 },
});

export async function remoteSessionWorkflow(input: RemoteSessionInput): Promise<RemoteSessionState> {
  const state: RemoteSessionState = input.carried ?? {
    status: 'starting',
    model: input.model,
    tokenIssuedAt: 0,
    tokenExpiresAt: 0,
    seq: 0,
  };
  const identity = {
    sessionId: input.sessionId,
    machineId: input.machineId,
    userId: input.userId,
    tenantId: input.tenantId,
    cliTool: input.cliTool,
    sessionType: input.sessionType,
  };
  let ended: SessionEnd | undefined;
  // Lifecycle changes run one at a time, in arrival order; the bind step holds the lock first.
  let busy = state.status === 'starting';
  const exclusive = async <T>(fn: () => Promise<T>): Promise<T> => {
    await condition(() => !busy);
    busy = true;
    try {
      return await fn();
    } finally {
      busy = false;
    }
  };
  const nextCommandId = () => `${input.sessionId}:${++state.seq}`;
  const result = (ack?: AgentAck): LifecycleResult => ({
    session_id: input.sessionId,
    status: state.status,
    model: state.model,
    agent_acknowledged: ack?.acknowledged ?? false,
    agent_response: ack?.agentResponse ?? null,
  });
  const refuse = (reason: string) => ApplicationFailure.nonRetryable(reason, INVALID_TRANSITION);
  const assertLive = () => {
    if (state.status === 'starting') throw refuse('the session is still starting');
    if (isTerminal(state.status)) throw refuse(`the session is ${state.status}`);
  };

  const lifecycle = (event: 'pause' | 'resume' | 'stop') =>
    exclusive(async () => {
      // Checked again under the lock: an earlier queued change may have moved the state.
      const t = transition(state.status as RemoteSessionStatus, event);
      if (!t.ok) throw refuse(t.reason);
      const ack = await acts.applySessionTransition({
        sessionId: input.sessionId,
        machineId: input.machineId,
        event,
        to: t.next,
        commandId: nextCommandId(),
      });
      state.status = t.next;
      return result(ack);
    });
  const validate = (event: 'pause' | 'resume' | 'stop') => () => {
    const t = transition(state.status as RemoteSessionStatus, event);
    if (!t.ok) throw refuse(state.status === 'starting' ? 'the session is still starting' : t.reason);
  };

  setHandler(sessionBoundUpdate, async () => {
    await condition(() => state.status !== 'starting');
    return result();
  });
  setHandler(pauseSessionUpdate, () => lifecycle('pause'), { validator: validate('pause') });
  setHandler(resumeSessionUpdate, () => lifecycle('resume'), { validator: validate('resume') });
  setHandler(stopSessionUpdate, () => lifecycle('stop'), { validator: validate('stop') });
  setHandler(
    setModelUpdate,
    ({ model }) =>
      exclusive(async () => {
        assertLive();
        const ack = await acts.setSessionModel({
          sessionId: input.sessionId,
          machineId: input.machineId,
          model,
          commandId: nextCommandId(),
        });
        state.model = model;
        return result(ack);
      }),
    {
      validator: ({ model }) => {
        assertLive();
        if (typeof model !== 'string' || !model.trim() || model.length > 100)
          throw refuse('model must be a non-empty string of at most 100 characters');
      },
    },
  );
  const rotate = () =>
    exclusive(async () => {
      if (isTerminal(state.status)) return result();
      const times = await acts.rotateSessionToken({ ...identity, commandId: nextCommandId() });
      state.tokenIssuedAt = times.tokenIssuedAt;
      state.tokenExpiresAt = times.tokenExpiresAt;
      return result();
    });
  setHandler(rotateTokenUpdate, rotate, { validator: assertLive });
  setHandler(sessionEndedSignal, (end) => {
    if (!isTerminal(state.status)) ended ??= end;
  });
  setHandler(sessionStateQuery, () => state);

  if (state.status === 'starting') {
    try {
      const times = await acts.bindRemoteSession({
        ...identity,
        projectPath: input.projectPath,
        model: state.model,
        title: input.title,
        proxyBaseUrl: input.proxyBaseUrl,
        commandId: `${input.sessionId}:start`,
      });
      state.tokenIssuedAt = times.tokenIssuedAt;
      state.tokenExpiresAt = times.tokenExpiresAt;
      state.status = 'active';
    } catch (err) {
      // Binding failed for good: leave no live-looking row or usable token behind.
      await acts.finishRemoteSession({ sessionId: input.sessionId, event: 'cli_exited', to: 'completed' });
      throw err;
    } finally {
      busy = false;
    }
  }

  while (!isTerminal(state.status)) {
    const untilRotation = rotationDueAt(state.tokenIssuedAt, state.tokenExpiresAt) - Date.now();
    const woke = await condition(
      () => isTerminal(state.status) || ended !== undefined || workflowInfo().continueAsNewSuggested,
      Math.max(untilRotation, 1),
    );
    if (!woke) {
      await rotate();
      continue;
    }
    if (ended && !isTerminal(state.status)) {
      const end = ended;
      await exclusive(async () => {
        const t = transition(state.status as RemoteSessionStatus, end.reason);
        if (!t.ok) return;
        await acts.finishRemoteSession({ sessionId: input.sessionId, event: end.reason, to: t.next });
        state.status = t.next;
      });
    } else if (!isTerminal(state.status) && workflowInfo().continueAsNewSuggested) {
      // Bounded history: hand the state to a fresh run once no change is in flight.
      await condition(() => allHandlersFinished() && !busy);
      await continueAsNew<typeof remoteSessionWorkflow>({ ...input, carried: state });
    }
  }
  await condition(allHandlersFinished);
  return state;
}
