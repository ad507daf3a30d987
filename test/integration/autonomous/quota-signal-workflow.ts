// A test-only stand-in for the autonomous workflow in quota-resume.test.ts: started under the real id
// `autonomous-<id>`, it counts quotaRestoredSignal deliveries (the contract's own definition) and ends
// once it has seen `expect` of them. The real autonomous workflow (workflows/autonomous/workflow.ts)
// applies `quota_restored` on the same signal.
import { condition, defineQuery, setHandler } from '@temporalio/workflow';
import { quotaRestoredSignal } from '../../../workflows/autonomous/contract.ts';

export const signalsSeenQuery = defineQuery<number>('probe.signalsSeen');

export async function quotaSignalProbeWorkflow(input: { expect: number }): Promise<number> {
  let seen = 0;
  setHandler(quotaRestoredSignal, () => {
    seen++;
  });
  setHandler(signalsSeenQuery, () => seen);
  await condition(() => seen >= input.expect);
  return seen;
}
