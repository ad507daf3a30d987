// How one CLI attempt ended, as a structured outcome (spec document 2 "Errors" 4: runner failure,
// empty output, context overflow and no-new-code are recorded separately; classification uses
// structured runner errors and zero-token error envelopes, never text scanning of normal output).
// No-new-code is the orchestrator's verdict from the worktree's diff, not the runner's.
//
// Order of the rules: the runner's own stops first (cancel, timeout: the exit code of a killed process
// says nothing), then a structured context-overflow line, then failure (could not start, non-zero exit,
// killed by a signal, an error result, or no end-of-turn line), then empty output (the turn ended
// cleanly but the CLI produced neither text nor a tool call), else ok.

export type RunOutcome =
  | 'ok'
  | 'runner_failure'
  | 'empty_output'
  | 'context_overflow'
  | 'timeout'
  | 'cancelled';

export interface AttemptFacts {
  stoppedFor: 'timeout' | 'cancelled' | null;
  spawnError?: string;
  exitCode: number | null;
  signal: string | null;
  turnEnded: boolean;
  contextOverflow: boolean;
  /** The CLI's end-of-turn error, if it reported one (adapter LineInfo.turnError). */
  turnError?: string;
  /** Non-empty assistant text or a tool call was seen. */
  producedOutput: boolean;
}

/** A small, structured description of a failed attempt; never the prompt or the CLI's normal text. */
export interface ErrorEnvelope {
  outcome: Exclude<RunOutcome, 'ok'>;
  message: string;
  exitCode: number | null;
  signal: string | null;
  /** The structured error code when the CLI gave one (context overflow). */
  code?: string;
  /** Last lines of the CLI's stderr (cut), for runner failures. */
  stderr?: string;
}

export function classifyAttempt(f: AttemptFacts): RunOutcome {
  if (f.stoppedFor === 'cancelled') return 'cancelled';
  if (f.stoppedFor === 'timeout') return 'timeout';
  if (f.contextOverflow) return 'context_overflow';
  if (f.spawnError !== undefined) return 'runner_failure';
  if (f.exitCode !== 0 || f.signal !== null || f.turnError !== undefined || !f.turnEnded)
    return 'runner_failure';
  if (!f.producedOutput) return 'empty_output';
  return 'ok';
}

export function errorEnvelope(
  outcome: RunOutcome,
  f: AttemptFacts & { stderrTail?: string; overflowCode?: string },
): ErrorEnvelope | undefined {
  const base = { exitCode: f.exitCode, signal: f.signal };
  switch (outcome) {
    case 'ok':
      return undefined;
    case 'cancelled':
      return { outcome, message: 'the run was cancelled; its process group was killed', ...base };
    case 'timeout':
      return { outcome, message: 'the task timeout was reached; its process group was killed', ...base };
    case 'context_overflow':
      return {
        outcome,
        message: 'the model context window was exceeded',
        ...base,
        code: f.overflowCode ?? 'context_length_exceeded',
      };
    case 'empty_output':
      return { outcome, message: 'the CLI ended its turn without any text or tool call', ...base };
    case 'runner_failure': {
      const message =
        f.spawnError !== undefined
          ? `the CLI could not be started: ${f.spawnError}`
          : f.turnError !== undefined
            ? `the CLI reported an error: ${f.turnError}`
            : !f.turnEnded
              ? `the CLI exited (${f.exitCode ?? f.signal}) without ending its turn`
              : `the CLI exited with ${f.exitCode ?? f.signal}`;
      return {
        outcome,
        message: message.slice(0, 600),
        ...base,
        ...(f.stderrTail ? { stderr: f.stderrTail.slice(-1000) } : {}),
      };
    }
    default: {
      const never: never = outcome;
      throw new Error(`unhandled outcome ${String(never)}`);
    }
  }
}
