// A minimal workflow for runner-temporal.test.ts: runs the runner activity once with a heartbeat
// timeout, so Temporal delivers a cancellation to it. The real autonomous workflow comes later.
import { ActivityCancellationType, proxyActivities } from '@temporalio/workflow';
import type { createAutonomousRunnerActivities } from '../../../activities/autonomous/run-cli.ts';
import type { RunCliInput, RunCliResult } from '../../../services/autonomous/runner/run-cli.ts';

const { runAutonomousCli } = proxyActivities<ReturnType<typeof createAutonomousRunnerActivities>>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '5 seconds',
  retry: { maximumAttempts: 1 },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

export async function runnerProbeWorkflow(input: RunCliInput): Promise<RunCliResult> {
  return runAutonomousCli(input);
}
