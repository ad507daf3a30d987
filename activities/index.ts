// Every activity the worker registers, built from the dependencies they need.
import type { DatabaseHandle } from '../db/client.ts';
import { createProbeActivities } from './probe.ts';

export interface ActivityDeps {
  database: DatabaseHandle;
}

export function createActivities(_deps: ActivityDeps) {
  return { ...createProbeActivities() };
}
