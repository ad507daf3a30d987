// A tiny workflow that proves the Temporal path end to end (client -> server -> worker -> activity),
// optionally waiting for a signal so tests can check that a running workflow survives a restart.
import { condition, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { ProbeActivities } from '../activities/probe.ts';

export const finishProbeSignal = defineSignal<[string]>('finishProbe');

const { echo } = proxyActivities<ProbeActivities>({ startToCloseTimeout: '30 seconds' });

export async function probeWorkflow(input: { message: string; waitForSignal?: boolean }): Promise<string> {
  let suffix = '';
  setHandler(finishProbeSignal, (s) => {
    suffix = s;
  });
  if (input.waitForSignal) await condition(() => suffix !== '');
  return echo(`${input.message}${suffix}`);
}
