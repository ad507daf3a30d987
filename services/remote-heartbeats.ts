// Heartbeats written behind (domain/remote-heartbeat.ts says when): each API instance keeps the
// latest request time per machine and writes them every HEARTBEAT_FLUSH_MS in one statement per
// chunk of machines, only ever moving a stored heartbeat forward and only on a machine still stored
// `online` (one marked offline meanwhile is written at once by its next request). A process that dies
// loses at most its last HEARTBEAT_FLUSH_MS of heartbeats; the agent's next request writes again.
import type { DatabaseHandle } from '../db/client.ts';
import { remoteMachinesRepository } from '../db/repositories/remote-machines.ts';
import { HEARTBEAT_FLUSH_MS } from '../domain/remote-heartbeat.ts';

export interface HeartbeatsBehind {
  /** The machine was heard from at `at`; written within HEARTBEAT_FLUSH_MS. */
  record(machineId: string, at: Date): void;
  /** Writes what is kept now (the timer does it on its own; tests and shutdown call it). */
  flush(): Promise<void>;
}

const CHUNK = 300;
const writers = new WeakMap<DatabaseHandle, HeartbeatsBehind>();

/** `warn`: told of a flush that failed (the first caller's logger is kept). */
export function heartbeatsBehind(
  database: DatabaseHandle,
  warn: (msg: string, fields: Record<string, unknown>) => void = () => {},
): HeartbeatsBehind {
  let writer = writers.get(database);
  if (!writer) {
    writer = createWriter(database, warn);
    writers.set(database, writer);
  }
  return writer;
}

function createWriter(
  database: DatabaseHandle,
  warn: (msg: string, fields: Record<string, unknown>) => void,
): HeartbeatsBehind {
  const machines = remoteMachinesRepository(database);
  let pending = new Map<string, Date>();
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> = Promise.resolve();

  const writeOut = async () => {
    const batch = pending;
    pending = new Map();
    const entries = [...batch];
    for (let i = 0; i < entries.length; i += CHUNK)
      await machines.recordHeartbeatsBehind(entries.slice(i, i + CHUNK));
  };
  const flush = () => {
    flushing = flushing.then(writeOut).catch((err: Error) => {
      // The database was briefly away (or is closed): these heartbeats are lost, the next requests
      // of the same agents record them again.
      warn('heartbeats written behind were not stored; the agents’ next requests write them', {
        error: err.message,
      });
    });
    return flushing;
  };

  return {
    record(machineId, at) {
      const kept = pending.get(machineId);
      if (!kept || kept < at) pending.set(machineId, at);
      if (!timer) {
        timer = setInterval(() => {
          if (pending.size) void flush();
        }, HEARTBEAT_FLUSH_MS);
        timer.unref();
      }
    },
    flush,
  };
}
