// The baseline the autonomous benchmark prints beside the workflows: the same seven CLI steps of a
// happy workflow (plan, plan_review, implementation, test, pr_review, report, acceptance_verification,
// with the workflow's own prompts and session lines) run back to back by the runner service alone
// (services/autonomous/runner/run-cli.ts cliRunner), in the same process, on the same database, proxy
// and mock provider, without Temporal, git orchestration or the state machine. So the reader sees the
// raw cost of a step (the CLI process, and the runner's own work around it: opening the line, issuing
// and revoking the proxy token, settling the metered usage) beside what the workflow adds.
//
// Two times per step: `step` is cliRunner.run() from call to return (what a runAutonomousCli activity
// execution contains), `process` is the CLI process from its `started` to its `exited` event on the
// activity bus (what the workflow figures call the CLI's own time).

import { LINE_OF_KIND } from '../../domain/autonomous/milestones.ts';
import { type PromptStep, stepPrompt } from '../../domain/autonomous/prompts.ts';
import { ActivityBus } from '../../services/autonomous/activity-bus.ts';
import { createAutonomousWorkflows } from '../../services/autonomous/create-workflows.ts';
import { cliRunner } from '../../services/autonomous/runner/run-cli.ts';
import { sessionLines } from '../../services/autonomous/session-lines.ts';
import { ProcessClock } from './history.ts';
import type { BenchWorld } from './world.ts';

/** The CLI steps of a happy workflow, in order. */
export const HAPPY_CLI_STEPS: readonly PromptStep[] = [
  'plan',
  'plan_review',
  'implementation',
  'test',
  'pr_review',
  'report',
  'acceptance_verification',
];

export interface BaselineResult {
  /** One per sequence: the seven steps back to back. */
  sequenceMs: number[];
  /** One per step. */
  stepMs: number[];
  processMs: number[];
}

export async function runBaseline(
  world: BenchWorld,
  opts: { sequences: number; concurrency: number; requirement: string },
): Promise<BaselineResult> {
  const deps = { database: world.database, settings: world.settings, now: () => new Date() };
  const bus = new ActivityBus();
  const clock = new ProcessClock();
  const runner = cliRunner(deps, { bus });
  const lines = sessionLines(deps);
  const result: BaselineResult = { sequenceMs: [], stepMs: [], processMs: [] };

  async function sequence(i: number): Promise<void> {
    const user = world.users[i % world.users.length]!;
    const project = world.project(`baseline-${i}`);
    const created = await createAutonomousWorkflows(
      deps,
      { id: user.id, tenantId: world.tenantId },
      {
        requirement: opts.requirement,
        project_path: project,
        cli_tool: 'cli_beta',
      },
    );
    if (created.kind !== 'single') throw new Error('expected one workflow');
    const workflowId = created.workflow.workflowId;
    await lines.ensureLines(workflowId, 'cli_beta', null);
    const unsubscribe = bus.subscribe(workflowId, clock.on);
    const cursors: Record<string, number> = {};
    try {
      const t0 = performance.now();
      for (const step of HAPPY_CLI_STEPS) {
        const line = LINE_OF_KIND[step]!;
        const s0 = performance.now();
        const r = await runner.run({
          workflowId,
          line,
          prompt: stepPrompt(step, { workflowId, requirement: opts.requirement, round: 1 }),
          worktreePath: project,
          cliTool: 'cli_beta',
          ...(cursors[line] !== undefined ? { usageCursor: cursors[line] } : {}),
        });
        result.stepMs.push(performance.now() - s0);
        cursors[line] = r.usageCursor;
        if (r.outcome !== 'ok' || r.usage.requests !== 1)
          throw new Error(
            `baseline step ${step}: outcome ${r.outcome}, ${r.usage.requests} metered requests`,
          );
      }
      result.sequenceMs.push(performance.now() - t0);
    } finally {
      unsubscribe();
    }
    const spans = clock.spans.get(workflowId) ?? [];
    if (spans.length !== HAPPY_CLI_STEPS.length)
      throw new Error(`baseline: ${spans.length} CLI processes seen for ${HAPPY_CLI_STEPS.length} steps`);
    result.processMs.push(...spans);
  }

  let next = 0;
  const lanes = Array.from({ length: Math.min(opts.concurrency, opts.sequences) }, async () => {
    while (next < opts.sequences) await sequence(next++);
  });
  await Promise.all(lanes);
  return result;
}
