// The safety net of the agents' long polls, one per process instead of one per poll. A held poll wakes
// on the bus when a command is queued for its machine; a wake-up can still be missed (a command queued
// by another process on SQLite, a NOTIFY lost while the LISTEN connection reconnects) and a delivered
// command whose answer never came becomes claimable again after the lease without anyone publishing.
// Each poll used to re-run its claim every 5 s for that: with 1,000 idle agents that was 200 UPDATE
// statements a second on the serving thread (bench/remote --agents, issue 31 item 4: a quarter of a
// core while nothing happened). Now every SWEEP_MS one statement asks which of the machines with a
// held poll here may have something to claim (runtime-commands.ts machinesWithClaimable), and only
// their polls are woken to claim. The bound on a missed wake-up stays SWEEP_MS.
import type { DatabaseHandle } from '../db/client.ts';
import { runtimeCommandsRepository } from '../db/repositories/runtime-commands.ts';
import { remoteBus, topics } from './remote-bus.ts';
import { REDELIVER_AFTER_MS } from './remote-commands.ts';

/** How often the held polls' machines are checked: the old per-poll re-check interval. */
export const SWEEP_MS = 5_000;
/** Machine ids per statement (well under SQLite's bound parameter limit). */
const CHUNK = 500;

export interface CommandSweep {
  /** Marks a poll of this machine as held here until the returned function is called. */
  watch(machineId: string): () => void;
}

const sweeps = new WeakMap<DatabaseHandle, CommandSweep>();

export function commandSweep(deps: { database: DatabaseHandle; now: () => Date }): CommandSweep {
  let sweep = sweeps.get(deps.database);
  if (!sweep) {
    sweep = createSweep(deps);
    sweeps.set(deps.database, sweep);
  }
  return sweep;
}

function createSweep(deps: { database: DatabaseHandle; now: () => Date }): CommandSweep {
  const repo = runtimeCommandsRepository(deps.database);
  const bus = remoteBus(deps.database);
  /** Held polls per machine id. */
  const held = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;
  let running = false;

  const tick = async () => {
    if (running) return;
    running = true;
    try {
      const ids = [...held.keys()];
      const at = deps.now();
      const redeliverBefore = new Date(at.getTime() - REDELIVER_AFTER_MS);
      for (let i = 0; i < ids.length; i += CHUNK) {
        const due = await repo.machinesWithClaimable(ids.slice(i, i + CHUNK), at, redeliverBefore);
        for (const id of due) bus.wakeLocal(topics.machineCommands(id));
      }
    } catch {
      // A failed sweep (database briefly away) is retried at the next tick; the polls end at wait_ms.
    } finally {
      running = false;
    }
  };

  return {
    watch(machineId) {
      held.set(machineId, (held.get(machineId) ?? 0) + 1);
      if (!timer) {
        timer = setInterval(() => void tick(), SWEEP_MS);
        timer.unref();
      }
      let done = false;
      return () => {
        if (done) return;
        done = true;
        const n = (held.get(machineId) ?? 1) - 1;
        if (n > 0) held.set(machineId, n);
        else held.delete(machineId);
        if (held.size === 0 && timer) {
          clearInterval(timer);
          timer = undefined;
        }
      };
    },
  };
}
