// How one CLI attempt ended, as a structured outcome (spec document 2 "Errors" 4: runner failure,
// empty output, context overflow and no-new-code are recorded separately; classification uses
// structured runner errors and zero-token error envelopes, never text scanning of normal output).
// No-new-code is the orchestrator's verdict from the worktree's diff, not the runner's.
//
// Order of the rules: the runner's own stops first (cancel, timeout: the exit code of a killed process
// says nothing), then a structured context-overflow line, then failure (could not start, non-zero exit,
// killed by a signal, an error result, or no end-of-turn line), then empty output (the turn ended
// cleanly but the CLI produced neither text nor a tool call), else ok.
//
// The model proxy's fact: a CLI that fails without a structured line (Claude Code prints Anthropic's
// "prompt is too long" 400 as plain text) is classified from the class of the last provider error the
// proxy relayed for the line's session during the attempt (`providerError`, read from
// agent_sessions.last_provider_error; domain/proxy/provider-errors.ts reads the provider's error
// envelope, not the CLI's text). A failed attempt with a `context_overflow` there is a context
// overflow; the other classes give the failure's envelope a structured `code` the workflow maps
// (domain/autonomous/errors.ts classifyRunnerError: insufficient_quota -> hard_quota pause, ...).
// The proxy's OWN quota refusals (429 quota_exceeded, 503 quota_check_failed: the call never reached
// the provider) are recorded in the same place (domain/proxy/session-call-errors.ts) and reach the
// envelope as `proxyRefusal`, with the refusal's type as its `code` (errors.ts: app_quota, a fail-closed
// pause the quota schedule resumes). Either way the attempt stays a runner failure here: what the
// workflow does about it is errors.ts's decision, from the code alone.

import type { ProviderErrorClass } from '../../../domain/proxy/provider-errors.ts';
import type { ProxyQuotaRefusal } from '../../../domain/proxy/session-call-errors.ts';

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
  /** The class of the last provider error the proxy relayed for the line's session in this attempt. */
  providerError?: ProviderErrorClass | null;
  /** The model proxy's own quota refusal of the line's last failed call in this attempt. */
  proxyRefusal?: ProxyQuotaRefusal | null;
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
  /** The class of the provider error the model proxy relayed during the attempt, if any. */
  providerError?: ProviderErrorClass;
  /** The model proxy refused the attempt's last failed call itself (its quota), if it did. */
  proxyRefusal?: ProxyQuotaRefusal;
}

/** The structured code a failure's envelope carries for a provider error class (errors.ts reads it). */
const PROVIDER_ERROR_CODES: Partial<Record<ProviderErrorClass, string>> = {
  context_overflow: 'context_length_exceeded',
  hard_quota: 'insufficient_quota',
  rate_limited: 'rate_limit_exceeded',
  overloaded: 'overloaded_error',
  server_error: 'server_error',
};

export function classifyAttempt(f: AttemptFacts): RunOutcome {
  if (f.stoppedFor === 'cancelled') return 'cancelled';
  if (f.stoppedFor === 'timeout') return 'timeout';
  if (f.contextOverflow) return 'context_overflow';
  if (f.spawnError !== undefined) return 'runner_failure';
  if (f.exitCode !== 0 || f.signal !== null || f.turnError !== undefined || !f.turnEnded)
    return f.providerError === 'context_overflow' ? 'context_overflow' : 'runner_failure';
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
        message:
          f.contextOverflow || f.providerError !== 'context_overflow'
            ? 'the model context window was exceeded'
            : 'the model provider answered that the context window was exceeded',
        ...base,
        code: f.overflowCode ?? 'context_length_exceeded',
        ...(!f.contextOverflow && f.providerError ? { providerError: f.providerError } : {}),
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
      const provider = f.providerError
        ? ` (the model provider's last error: ${f.providerError})`
        : f.proxyRefusal
          ? ` (the model proxy refused the call: ${f.proxyRefusal})`
          : '';
      return {
        outcome,
        message: `${message.slice(0, 600)}${provider}`,
        ...base,
        ...(f.stderrTail ? { stderr: f.stderrTail.slice(-1000) } : {}),
        ...(f.providerError ? { providerError: f.providerError } : {}),
        ...(f.providerError && PROVIDER_ERROR_CODES[f.providerError]
          ? { code: PROVIDER_ERROR_CODES[f.providerError] }
          : {}),
        // The refusal's own type is the code (the proxy's error type: quota_exceeded, quota_check_failed).
        ...(!f.providerError && f.proxyRefusal ? { proxyRefusal: f.proxyRefusal, code: f.proxyRefusal } : {}),
      };
    }
    default: {
      const never: never = outcome;
      throw new Error(`unhandled outcome ${String(never)}`);
    }
  }
}
