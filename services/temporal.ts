// The API's handle on Temporal: a lazily connected client, and a cheap "is a worker polling" probe used
// by /readyz (it works the same whether the worker runs in this process or elsewhere).
import {
  Client,
  Connection,
  type ConnectionOptions,
  defaultGrpcRetryOptions,
  makeGrpcRetryInterceptor,
} from '@temporalio/client';
import proto from '@temporalio/proto';
import { namespaceMissingDetail, temporalUnavailability } from './temporal-unavailable.ts';

const WORKFLOW_QUEUE = proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW;
const PROBE_DEADLINE_MS = 2000;

export interface TemporalAccess {
  namespace: string;
  taskQueue: string;
  client(): Promise<Client>;
  /** ok when Temporal answers and a worker polled the task queue in the last minute. */
  backgroundStatus(): Promise<{ ok: boolean; detail: string }>;
  close(): Promise<void>;
}

export function createTemporalAccess(opts: {
  address: string;
  namespace: string;
  taskQueue: string;
  /** TLS / mTLS / API key of the cluster (config/temporal-connection.ts); unset: plain `address`. */
  connection?: ConnectionOptions;
  /** How long a connection attempt may take (SVC_TEMPORAL_CONNECT_TIMEOUT_MS; default 5 s). */
  connectTimeoutMs?: number;
  /** How long one call is retried while Temporal is unreachable (SVC_TEMPORAL_RETRY_BUDGET_MS; 3 s). */
  retryBudgetMs?: number;
}): TemporalAccess {
  let connecting: Promise<Client> | undefined;
  let connection: Connection | undefined;
  const client = () => {
    connecting ??= Connection.connect({
      ...(opts.connection ?? { address: opts.address }),
      connectTimeout: opts.connectTimeoutMs ?? 5000,
      interceptors: [budgetedRetry(opts.retryBudgetMs ?? 3000)],
    }).then(
      (c) => {
        connection = c;
        return new Client({ connection: c, namespace: opts.namespace });
      },
      (err) => {
        connecting = undefined;
        throw err;
      },
    );
    return connecting;
  };
  let cached: { at: number; value: { ok: boolean; detail: string } } | undefined;
  return {
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    client,
    async backgroundStatus() {
      if (cached && Date.now() - cached.at < 2000) return cached.value;
      let value: { ok: boolean; detail: string };
      try {
        const c = await client();
        // Within /readyz's 3 s: an unreachable server ends as DEADLINE_EXCEEDED with a clear detail.
        const res = await c.withDeadline(Date.now() + PROBE_DEADLINE_MS, () =>
          c.workflowService.describeTaskQueue({
            namespace: opts.namespace,
            taskQueue: { name: opts.taskQueue },
            taskQueueType: WORKFLOW_QUEUE,
          }),
        );
        const recent = (res.pollers ?? []).filter((p) => {
          const secs = Number(p.lastAccessTime?.seconds ?? 0);
          return Date.now() / 1000 - secs < 60;
        });
        value = recent.length
          ? { ok: true, detail: `${recent.length} worker poller(s) on ${opts.taskQueue}` }
          : { ok: false, detail: `Temporal answers but no worker polls task queue ${opts.taskQueue}` };
      } catch (err) {
        const why = temporalUnavailability(err);
        value = {
          ok: false,
          detail:
            why?.kind === 'namespace_missing'
              ? namespaceMissingDetail(opts.namespace)
              : `Temporal unreachable at ${opts.address}: ${(err as Error).message}`,
        };
      }
      cached = { at: Date.now(), value };
      return value;
    },
    async close() {
      await connection?.close();
    },
  };
}

/**
 * The client's gRPC retry (the SDK default: 10 attempts, about 20 s while the server is down), bounded
 * by a time budget per call: an API request that needs Temporal answers 503 within about `budgetMs`
 * instead of hanging. A retried call resends the same request (an update keeps its update id, a start
 * its workflow id), so the server applies it once however many attempts reached it.
 */
function budgetedRetry(budgetMs: number): NonNullable<ConnectionOptions['interceptors']>[number] {
  const backoff = defaultGrpcRetryOptions();
  return (options, nextCall) => {
    // A call with its own deadline (withDeadline) ends by it, not after the next backoff delay.
    const deadline = options.deadline === undefined ? Number.POSITIVE_INFINITY : Number(options.deadline);
    const giveUpAt = Math.min(Date.now() + budgetMs, deadline);
    return makeGrpcRetryInterceptor({
      retryableDecider: (attempt, status) =>
        backoff.retryableDecider(attempt, status) && Date.now() < giveUpAt,
      delayFunction: (attempt, status) =>
        Math.max(0, Math.min(backoff.delayFunction(attempt, status), giveUpAt - Date.now())),
    })(options, nextCall);
  };
}
