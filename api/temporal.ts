// The API's handle on Temporal: a lazily connected client, and a cheap "is a worker polling" probe used
// by /readyz (it works the same whether the worker runs in this process or elsewhere).
import { Client, Connection, type ConnectionOptions } from '@temporalio/client';
import proto from '@temporalio/proto';

const WORKFLOW_QUEUE = proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW;

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
}): TemporalAccess {
  let connecting: Promise<Client> | undefined;
  let connection: Connection | undefined;
  const client = () => {
    connecting ??= Connection.connect({
      ...(opts.connection ?? { address: opts.address }),
      connectTimeout: opts.connectTimeoutMs ?? 5000,
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
        const res = await c.workflowService.describeTaskQueue({
          namespace: opts.namespace,
          taskQueue: { name: opts.taskQueue },
          taskQueueType: WORKFLOW_QUEUE,
        });
        const recent = (res.pollers ?? []).filter((p) => {
          const secs = Number(p.lastAccessTime?.seconds ?? 0);
          return Date.now() / 1000 - secs < 60;
        });
        value = recent.length
          ? { ok: true, detail: `${recent.length} worker poller(s) on ${opts.taskQueue}` }
          : { ok: false, detail: `Temporal answers but no worker polls task queue ${opts.taskQueue}` };
      } catch (err) {
        value = { ok: false, detail: `Temporal unreachable: ${(err as Error).message}` };
      }
      cached = { at: Date.now(), value };
      return value;
    },
    async close() {
      await connection?.close();
    },
  };
}
