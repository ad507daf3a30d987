// Session output: appended in order by agent polls, read back from any index by the browser (JSON or
// SSE). Every append wakes the session's live readers on every instance.
import type { DatabaseHandle } from '../db/client.ts';
import {
  type OutputToAppend,
  type RuntimeOutputRow,
  runtimeOutputsRepository,
} from '../db/repositories/runtime-outputs.ts';
import { remoteBus, topics } from './remote-bus.ts';

/** One output event as the API shows it: spec fields {data, stream, timestamp} plus its index. */
export interface OutputEvent {
  event_index: number;
  stream: string;
  data: string;
  timestamp: string;
}

export function toOutputEvent(row: RuntimeOutputRow): OutputEvent {
  let data = '';
  let timestamp = row.createdAt.toISOString();
  try {
    const p = JSON.parse(row.payload ?? '{}') as { data?: unknown; timestamp?: unknown };
    if (typeof p.data === 'string') data = p.data;
    if (typeof p.timestamp === 'string') timestamp = p.timestamp;
  } catch {
    data = row.payload ?? '';
  }
  return { event_index: row.eventIndex, stream: row.stream, data, timestamp };
}

export function remoteOutput(database: DatabaseHandle) {
  const repo = runtimeOutputsRepository(database);
  const bus = remoteBus(database);
  return {
    async append(sessionId: string, entries: OutputToAppend[]): Promise<number> {
      const rows = await repo.append(sessionId, entries);
      if (rows.length) await bus.publish(topics.sessionOutput(sessionId));
      return rows.length;
    },
    async read(sessionId: string, fromIndex: number, limit: number): Promise<OutputEvent[]> {
      return (await repo.listFrom(sessionId, fromIndex, limit)).map(toOutputEvent);
    },
    /** Wakes live readers without new output (the session's status changed). */
    notify: (sessionId: string) => bus.publish(topics.sessionOutput(sessionId)),
    bus,
  };
}

export type RemoteOutput = ReturnType<typeof remoteOutput>;
