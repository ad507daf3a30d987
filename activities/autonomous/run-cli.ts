// Activities of the autonomous CLI runner (services/autonomous/runner/run-cli.ts): ensure a
// workflow's four session lines, and run the CLI for one step of one line.
//
// runAutonomousCli heartbeats every few seconds with {pid, state, run_ms, lines, attempt} (never the
// token, the prompt or output), so a workflow that sets a heartbeat timeout learns of a dead worker
// quickly and its cancellation reaches the activity: the CLI's process group is then terminated
// (SIGTERM, SIGKILL after the grace period) and the activity ends as cancelled. Pause and resume do not
// go through Temporal: the runner reads the workflow's status from the database every second and
// freezes / continues the process group itself, whatever worker runs it.
// Inputs and results carry ids, paths, prompts and counters only: the proxy token is issued and
// revoked inside the activity.
import { Context } from '@temporalio/activity';
import { isolationNotice } from '../../services/autonomous/runner/isolation/decide.ts';
import { cliRunner, type RunCliInput, type RunCliResult } from '../../services/autonomous/runner/run-cli.ts';
import { type SessionLineName, sessionLines } from '../../services/autonomous/session-lines.ts';
import { createLogger } from '../../services/logger.ts';
import { sandboxStatus } from '../../services/sandbox/sandboxed.ts';
import type { ActivityDeps } from '../deps.ts';

export type { RunCliInput, RunCliResult };

let isolationLogged = false;

export function createAutonomousRunnerActivities(deps: ActivityDeps) {
  // Said once per process at start: whether agent CLIs run isolated, and if not, why.
  if (!isolationLogged) {
    isolationLogged = true;
    const notice = isolationNotice(deps.settings);
    const logger = createLogger(deps.settings.LOG_LEVEL);
    logger[notice.level]({ component: 'autonomous-runner' }, notice.message);
    // And whether the sandbox can be had: refused work is no surprise to the operator who read this.
    const sandbox = sandboxStatus(deps.settings);
    logger[sandbox.status === 'ok' ? 'info' : 'warn'](
      { component: 'sandbox' },
      sandbox.status === 'ok'
        ? `autonomous CLIs, CI and pre-commit hooks run in the sandbox (${sandbox.detail})`
        : sandbox.detail,
    );
  }
  const runner = cliRunner(deps);
  const lines = sessionLines(deps);
  return {
    async ensureAutonomousSessionLines(input: {
      workflowId: string;
      cliTool: string;
      model?: string | null;
    }): Promise<{ line: SessionLineName; sessionId: string }[]> {
      return lines.ensureLines(input.workflowId, input.cliTool, input.model ?? null);
    },

    async closeAutonomousSessionLines(input: { workflowId: string }): Promise<void> {
      await lines.closeLines(input.workflowId);
    },

    async runAutonomousCli(input: RunCliInput): Promise<RunCliResult> {
      const ctx = Context.current();
      const result = await runner.run(input, {
        signal: ctx.cancellationSignal,
        heartbeat: (detail) => ctx.heartbeat(detail),
      });
      // Cancelled by Temporal: the process group is gone; end as cancelled, not as a result.
      if (ctx.cancellationSignal.aborted) await ctx.cancelled;
      return result;
    },
  };
}
