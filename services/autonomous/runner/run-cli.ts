// The CLI runner of autonomous workflows (issue 13 items 4 and 6): runs the chosen AI CLI for one step
// of one session line in the workflow's worktree and returns a structured result.
//
// One step:
//   1. the line is opened (services/autonomous/session-lines.ts): its agent_sessions row is active and
//      its CLI conversation binding read; a fresh proxy token is issued for the line's session;
//   2. the CLI (agent/adapters.ts getAdapter: the same adapters and stream-json handling as the
//      remote agent) starts, or resumes the line's conversation, in the worktree with an EMPTY
//      environment plus PATH, HOME (the line's CLI home, runner/cli-home.ts), the adapter's own
//      non-secret variables and the proxy base URL and token (buildCliEnv), nothing else: the
//      worker's secrets (SVC_ENCRYPTION_KEY, DATABASE_URL, provider keys...) never reach it;
//   3. its process group is driven by runner/cli-process.ts (pause / resume / cancel from the
//      workflow's status in the database, the activity's cancellation, the task timeout);
//   4. its stdout lines become activity events on the stored bus (activity-bus.ts: every API instance
//      streams them; the step returns once they are stored) and the facts the outcome is classified
//      from (runner/outcome.ts, runner/line-events.ts);
//   5. the token is revoked, and the step's usage is read from the proxy's accounting for the line
//      (line-usage.ts: daily_messages rows after the line's cursor), never from the CLI's totals.
// Context overflow: the line's conversation binding is cleared and the step runs once more, fresh,
// with a compact self-contained prompt (the caller's, or runner/compact-prompt.ts); the new
// conversation is bound to the same line. Both attempts are returned in `attempts`, and the step's
// usage covers both (the failed attempt's usage is kept).
//
// Nothing secret leaves this module: the token is redacted from every text it returns or publishes
// (the CLI's error message, stderr tail, final text), and the progress it reports carries only a pid,
// a state and counters.
import { mkdirSync, statSync } from 'node:fs';
import { eq } from 'drizzle-orm';
import { buildCliEnv, type CliAdapter, getAdapter } from '../../../agent/adapters.ts';
import {
  CommandNotFoundError,
  type SandboxedCommand,
  SandboxUnavailableError,
} from '../../../agent/sandbox.ts';
import type { Settings } from '../../../config/settings.ts';
import type { DatabaseHandle } from '../../../db/client.ts';
import { sessionProviderErrors } from '../../../db/repositories/session-provider-errors.ts';
import { REPO_INTEGRITY_EXIT_CODE, REPO_INTEGRITY_MARKER } from '../../../domain/forge/integrity.ts';
import { type SessionCallError, splitSessionCallError } from '../../../domain/proxy/session-call-errors.ts';
import { sandboxed, sandboxStatus, serviceCliProxyBaseUrl } from '../../sandbox/sandboxed.ts';
import { type ActivityPublisher, type AutonomousActivityEvent, activityBusFor } from '../activity-bus.ts';
import { addUsage, type LineUsage, lineUsage, ZERO_USAGE } from '../line-usage.ts';
import { type LineState, type SessionLineName, sessionLines } from '../session-lines.ts';
import { lineHomePath, prepareLineHome } from './cli-home.ts';
import { type DesiredState, type ProcessProgress, runCliProcess } from './cli-process.ts';
import { buildCompactPrompt } from './compact-prompt.ts';
import { isolatedCliEnv } from './isolation/agent-env.ts';
import { handOverHome, reclaimHome } from './isolation/agent-home.ts';
import { decideIsolation } from './isolation/decide.ts';
import { gitMetadataRoots } from './isolation/git-metadata.ts';
import { IsolationRefusedError, type PreparedRun, prepareRun, worktreeOwner } from './isolation/launcher.ts';
import { forgetGroup, killLeftoverGroup, recordGroup } from './leftover.ts';
import { contextOverflowCode, finalTextOf, lineEvents } from './line-events.ts';
import { classifyAttempt, type ErrorEnvelope, errorEnvelope, type RunOutcome } from './outcome.ts';

/** Spec "Limits": task timeout 3600 s (AUTONOMOUS_TASK_TIMEOUT). */
export const DEFAULT_TASK_TIMEOUT_SECONDS = 3600;
export const FINAL_TEXT_MAX_CHARS = 16_000;
const PROXY_PATH = '/api/remote/llm-proxy';
/**
 * Reads of the proxy's failed-call fact of a failed attempt, autonomous.runner_settle_poll_ms apart
 * (about 2 s in all when there is none, by default).
 */
const PROVIDER_ERROR_SETTLE_READS = 8;

export interface RunCliInput {
  workflowId: string;
  line: SessionLineName;
  /** The step's prompt (ids and text the workflow already holds; never a secret). */
  prompt: string;
  /** Used for the retry after a context overflow; built from `prompt` when absent. */
  compactPrompt?: string;
  /**
   * The workflow retries a step that overflowed even after the fresh retry: clear the line's
   * conversation binding first and run the compact prompt on a fresh conversation (no second retry).
   */
  freshTranscript?: boolean;
  worktreePath: string;
  cliTool: string;
  model?: string | null;
  /** Running time allowed (frozen time excluded); default the AUTONOMOUS_TASK_TIMEOUT setting (3600). */
  timeoutSeconds?: number;
  /** The cursor the line's previous step returned (line-usage.ts); default: the line's current one. */
  usageCursor?: number;
}

export interface AttemptResult {
  outcome: RunOutcome;
  exitCode: number | null;
  resumed: boolean;
  providerSessionId: string | null;
  usage: LineUsage;
  errorEnvelope?: ErrorEnvelope;
  /** The Git metadata changed during the attempt (exit code 68, SVC_REPO_INTEGRITY_VIOLATION). */
  integrityViolation?: boolean;
}

export interface RunCliResult {
  outcome: RunOutcome;
  exitCode: number | null;
  /** The line's conversation after the step (bound to the line). */
  providerSessionId: string | null;
  finalText: string;
  /** The whole step's metered usage (every attempt). */
  usage: LineUsage;
  /** Where the line's next step starts counting. */
  usageCursor: number;
  errorEnvelope?: ErrorEnvelope;
  /** The Git metadata changed during the step: fail closed (exit code 68), nothing is committed. */
  integrityViolation?: boolean;
  attempts: AttemptResult[];
}

export interface RunControl {
  signal?: AbortSignal;
  heartbeat?: (detail: ProcessProgress & { attempt: number }) => void;
}

export interface RunnerOptions {
  pollMs?: number;
  heartbeatMs?: number;
  graceMs?: number;
  bus?: ActivityPublisher;
}

interface Deps {
  database: DatabaseHandle;
  settings: Settings;
  now: () => Date;
}

/** Workflow statuses in which the CLI must be frozen, or stopped; every other one lets it run. */
const FROZEN = new Set(['paused']);
const STOPPED = new Set(['cancelled']);

/** The proxy address the worker gives CLIs: autonomous.proxy_base_url, else the API's own address. */
export function autonomousProxyBaseUrl(settings: Settings): string {
  const configured = settings.autonomous.proxy_base_url ?? settings.SVC_PUBLIC_URL;
  if (configured) return `${configured.replace(/\/+$/, '')}${PROXY_PATH}`;
  const host = ['0.0.0.0', '::', ''].includes(settings.HOST) ? '127.0.0.1' : settings.HOST;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  return `http://${hostPart}:${settings.PORT}${PROXY_PATH}`;
}

/** The executable for a tool: autonomous.cli_paths[tool], else the adapter's own name on PATH. */
export function autonomousExecutable(
  settings: { autonomous: Pick<Settings['autonomous'], 'cli_paths'> },
  adapter: CliAdapter,
): string | null {
  return settings.autonomous.cli_paths[adapter.id] || adapter.executable || null;
}

const redactor = (secret: string) => (text: string) =>
  secret && text.includes(secret) ? text.split(secret).join('[redacted]') : text;

/** An attempt that never started: isolation refused it (the reason is the step's error). */
function refusedAttempt(
  reason: string,
  publish: (e: Omit<AutonomousActivityEvent, 'workflowId' | 'line' | 'at'>) => void,
) {
  publish({ type: 'error', subtype: 'exited', text: reason });
  return {
    outcome: 'runner_failure' as const,
    exitCode: null,
    providerSessionId: null,
    finalText: '',
    integrityViolation: false,
    envelope: {
      outcome: 'runner_failure' as const,
      message: reason,
      exitCode: null,
      signal: null,
      code: 'isolation_refused',
    },
  };
}

export function cliRunner(deps: Deps, options: RunnerOptions = {}) {
  const lines = sessionLines(deps);
  const settleMs = deps.settings.autonomous.runner_settle_poll_ms;
  const usage = lineUsage({ ...deps, settleStepMs: settleMs });
  const providerErrors = sessionProviderErrors(deps.database);

  /**
   * The fact the model proxy recorded for the line's session since `since` (a provider error's class
   * or its own quota refusal), read only for a failed attempt without a structured overflow line. The
   * proxy writes it just after answering (asynchronously), so an empty answer is read once more after
   * a short pause.
   */
  async function providerErrorSince(sessionId: string, since: Date): Promise<SessionCallError | null> {
    // The proxy writes the fact after answering; a busy database may take a moment (polled up to
    // PROVIDER_ERROR_SETTLE_READS times: a plain failure waits at most that long once).
    for (let read = 1; ; read++) {
      const fact = await providerErrors.since(sessionId, since);
      if (fact !== null || read >= PROVIDER_ERROR_SETTLE_READS) return fact;
      await new Promise((r) => setTimeout(r, settleMs));
    }
  }
  const bus = options.bus ?? activityBusFor(deps.database);
  const pollMs = options.pollMs ?? deps.settings.autonomous.runner_poll_ms;
  const heartbeatMs = options.heartbeatMs ?? deps.settings.autonomous.runner_heartbeat_ms;
  const graceMs = options.graceMs ?? 5000;
  const taskTimeoutSeconds = deps.settings.AUTONOMOUS_TASK_TIMEOUT ?? DEFAULT_TASK_TIMEOUT_SECONDS;
  const { db, t } = deps.database;

  async function desiredState(workflowId: string): Promise<DesiredState> {
    const [row] = await db
      .select({ status: t.autonomousWorkflows.status })
      .from(t.autonomousWorkflows)
      .where(eq(t.autonomousWorkflows.workflowId, workflowId));
    if (!row || STOPPED.has(row.status)) return 'cancelled';
    return FROZEN.has(row.status) ? 'paused' : 'running';
  }

  async function attempt(
    input: RunCliInput,
    state: LineState,
    prompt: string,
    resume: string | null,
    number: number,
    control: RunControl,
  ) {
    const adapter = getAdapter(input.cliTool);
    const publish = (e: Omit<AutonomousActivityEvent, 'workflowId' | 'line' | 'at'>) =>
      bus.publish({ workflowId: input.workflowId, line: input.line, at: deps.now().toISOString(), ...e });
    const executable = autonomousExecutable(deps.settings, adapter);
    const realProxyBaseUrl = autonomousProxyBaseUrl(deps.settings);
    // The sandbox (services/sandbox/): refused here, before any token exists, when it cannot be had.
    const sandbox = sandboxStatus(deps.settings);
    if (sandbox.status === 'unavailable')
      return refusedAttempt(`sandbox unavailable: ${sandbox.detail}`, publish);
    // Inside the sandbox the CLI reaches the proxy through the gate's loopback port.
    const proxyBaseUrl = serviceCliProxyBaseUrl(deps.settings, realProxyBaseUrl);
    // Execution isolation (isolation/decide.ts): a refused step ends here, before any token exists.
    const decision = decideIsolation(deps.settings, worktreeOwner(input.worktreePath));
    if (decision.kind === 'refused') return refusedAttempt(decision.reason, publish);
    const account = decision.kind === 'isolated' ? decision.account : null;
    const service = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
    if (account) reclaimHome(lineHomePath(deps.settings.dataDir, input.workflowId, input.line), service);
    const { home, env: homeEnv } = prepareLineHome(
      deps.settings.dataDir,
      input.workflowId,
      input.line,
      adapter,
      proxyBaseUrl,
    );
    // The process-group record stays out of the agent's reach when it owns the home.
    const groupDir = account ? `${home}.runner` : home;
    if (account) {
      mkdirSync(groupDir, { recursive: true, mode: 0o700 });
      handOverHome(home, account);
    }
    let wallClockHit = false;
    let prepared: PreparedRun;
    // Walking and hashing the Git metadata can outlast the activity's heartbeat timeout.
    const keepAlive = async <T>(fn: () => Promise<T>): Promise<T> => {
      const beat = () =>
        control.heartbeat?.({ pid: null, state: 'running', run_ms: 0, lines: 0, attempt: number });
      const timer = setInterval(beat, heartbeatMs);
      try {
        return await fn();
      } finally {
        clearInterval(timer);
      }
    };
    try {
      prepared = await keepAlive(() =>
        prepareRun({
          decision,
          worktree: input.worktreePath,
          home,
          executable,
          label: `${input.workflowId}-${input.line}`,
          onWallClock: () => {
            wallClockHit = true;
          },
        }),
      );
    } catch (err) {
      if (err instanceof IsolationRefusedError) return refusedAttempt(err.message, publish);
      throw err;
    }
    let finished: Awaited<ReturnType<PreparedRun['finish']>> | null = null;
    const finish = async () => {
      finished ??= await keepAlive(() => prepared.finish());
      return finished;
    };
    if (killLeftoverGroup(groupDir, account?.uid))
      publish({
        type: 'system',
        subtype: 'leftover_killed',
        text: 'killed a CLI left running by an earlier run',
      });
    // The attempt's window for the proxy's failed-call fact: an earlier attempt's fact is cleared,
    // and the start is taken to the whole second (the stored timestamp's precision on every dialect).
    let token: string;
    try {
      await providerErrors.clear(state.sessionId);
      ({ token } = await lines.issueToken(state, input.cliTool));
    } catch (err) {
      await finish().catch(() => undefined);
      throw err;
    }
    const attemptStarted = new Date(Math.floor(deps.now().getTime() / 1000) * 1000);
    const redact = redactor(token);
    // EMPTY environment: only PATH and HOME are taken, and HOME is the line's own. Isolated: nothing
    // of the service's environment at all (a fixed PATH, isolation/agent-env.ts).
    const env = account
      ? isolatedCliEnv(adapter, home, token, proxyBaseUrl, homeEnv)
      : buildCliEnv(
          adapter,
          { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', HOME: home },
          token,
          proxyBaseUrl,
          homeEnv,
          'linux',
        );
    const model = input.model ?? undefined;
    const args = resume ? adapter.resumeArgs(resume, model) : adapter.startArgs(model);
    let providerSessionId: string | null = null;
    let contextOverflow = false;
    let overflowCode: string | undefined;
    let turnError: string | undefined;
    let producedOutput = false;
    let finalText = '';
    let jail: SandboxedCommand | null = null;
    let notFound: string | null = null;
    if (executable)
      try {
        jail = sandboxed(deps.settings, {
          command: executable,
          args,
          workdir: input.worktreePath,
          home,
          env,
          readable: gitMetadataRoots(input.worktreePath),
          proxyBaseUrl: realProxyBaseUrl,
          runAs: prepared.uid !== undefined ? { uid: prepared.uid, gid: prepared.gid ?? prepared.uid } : null,
        });
      } catch (err) {
        if (err instanceof CommandNotFoundError) notFound = err.message;
        else {
          await finish().catch(() => undefined);
          await lines.revokeTokens(state.sessionId).catch(() => undefined);
          if (err instanceof SandboxUnavailableError)
            return refusedAttempt(`sandbox unavailable: ${err.message}`, publish);
          throw err;
        }
      }
    try {
      const end = jail
        ? await runCliProcess({
            adapter,
            executable: jail.command,
            args: jail.args,
            cwd: input.worktreePath,
            env: jail.env,
            ...(prepared.uid !== undefined ? { uid: prepared.uid, gid: prepared.gid } : {}),
            onSpawn: (pid) => prepared.onSpawn(pid),
            prompt,
            timeoutMs: Math.max(1, input.timeoutSeconds ?? taskTimeoutSeconds) * 1000,
            graceMs,
            pollMs,
            heartbeatMs,
            control: () => desiredState(input.workflowId),
            signal: control.signal,
            heartbeat: (p) => control.heartbeat?.({ ...p, attempt: number }),
            onState: (s, detail) => {
              if (s === 'started' && detail.pid) recordGroup(groupDir, detail.pid);
              publish({
                type: 'system',
                subtype: s,
                text:
                  s === 'started'
                    ? `CLI ${resume ? 'resumed' : 'started'} (pid ${detail.pid})`
                    : s === 'stopping'
                      ? `stopping the CLI (${detail.reason})`
                      : `CLI ${s}`,
              });
            },
            onLine: (event, info) => {
              if (info.conversationId) providerSessionId = info.conversationId;
              if (info.turnError) turnError = redact(info.turnError);
              const overflow = contextOverflowCode(event);
              if (overflow) {
                contextOverflow = true;
                overflowCode = overflow;
              }
              const text = finalTextOf(event);
              if (text !== undefined) finalText = text;
              for (const e of lineEvents(event, info)) {
                if (e.type === 'assistant_text' || e.type === 'tool_use') producedOutput = true;
                if (e.text) e.text = redact(e.text);
                if (e.input) e.input = redact(e.input);
                publish(e);
              }
            },
          })
        : {
            exitCode: null,
            signal: null,
            stoppedFor: null,
            spawnError: notFound ?? `no executable configured for ${input.cliTool}`,
            turnEnded: false,
            stderrTail: '',
            pid: null,
          };
      if (finalText.trim()) producedOutput = true;
      // Leftovers killed, then the Git metadata compared with its state before the run.
      const { violation } = await finish();
      if (wallClockHit && end.stoppedFor === null) end.stoppedFor = 'timeout';
      if (violation) {
        publish({ type: 'error', subtype: 'exited', text: redact(violation.message).slice(0, 2000) });
        return {
          outcome: 'runner_failure' as const,
          exitCode: REPO_INTEGRITY_EXIT_CODE,
          providerSessionId,
          finalText: redact(finalText).slice(0, FINAL_TEXT_MAX_CHARS),
          integrityViolation: true,
          envelope: {
            outcome: 'runner_failure' as const,
            message: redact(violation.message).slice(0, 2000),
            exitCode: REPO_INTEGRITY_EXIT_CODE,
            signal: end.signal,
            code: REPO_INTEGRITY_MARKER,
          },
        };
      }
      const failed =
        end.stoppedFor === null &&
        end.spawnError === undefined &&
        !contextOverflow &&
        (end.exitCode !== 0 || end.signal !== null || turnError !== undefined || !end.turnEnded);
      const { providerError, proxyRefusal } = splitSessionCallError(
        failed ? await providerErrorSince(state.sessionId, attemptStarted) : null,
      );
      const facts = {
        providerError,
        proxyRefusal,
        stoppedFor: end.stoppedFor,
        spawnError: end.spawnError,
        exitCode: end.exitCode,
        signal: end.signal,
        turnEnded: end.turnEnded,
        contextOverflow,
        turnError,
        producedOutput,
      };
      const outcome = classifyAttempt(facts);
      const envelope = errorEnvelope(outcome, { ...facts, stderrTail: redact(end.stderrTail), overflowCode });
      publish({
        type: outcome === 'ok' ? 'system' : 'error',
        subtype: 'exited',
        text: outcome === 'ok' ? 'CLI finished' : (envelope?.message ?? outcome),
      });
      return {
        outcome,
        exitCode: end.exitCode,
        providerSessionId,
        finalText: redact(finalText).slice(0, FINAL_TEXT_MAX_CHARS),
        envelope,
      };
    } finally {
      await jail?.close().catch(() => undefined);
      await finish().catch(() => undefined);
      forgetGroup(groupDir);
      await lines.revokeTokens(state.sessionId);
    }
  }

  async function step(input: RunCliInput, control: RunControl): Promise<RunCliResult> {
    const worktree = statSync(input.worktreePath, { throwIfNoEntry: false });
    if (!worktree?.isDirectory()) throw new Error(`worktree ${input.worktreePath} is not a directory`);
    const state = await lines.openLine(input.workflowId, input.line, input.cliTool, input.model ?? null);
    const startCursor = input.usageCursor ?? (await usage.cursorNow(state.sessionId));
    const attempts: AttemptResult[] = [];
    let cursor = startCursor;
    let prompt = input.prompt;
    let resume = state.providerSessionId;
    if (input.freshTranscript) {
      await lines.clearProviderSession(input.workflowId, input.line);
      prompt = input.compactPrompt ?? buildCompactPrompt(input.prompt);
      resume = null;
    }
    for (let number = 1; ; number++) {
      const a = await attempt(input, state, prompt, resume, number, control);
      const window = await usage.settle(state.sessionId, cursor);
      cursor = window.cursor;
      attempts.push({
        ...(a.integrityViolation ? { integrityViolation: true } : {}),
        outcome: a.outcome,
        exitCode: a.exitCode,
        resumed: resume !== null,
        providerSessionId: a.providerSessionId,
        usage: { total: window.total, input: window.input, output: window.output, requests: window.requests },
        ...(a.envelope ? { errorEnvelope: a.envelope } : {}),
      });
      if (a.outcome === 'context_overflow' && number === 1 && !input.freshTranscript) {
        // Fresh provider transcript on the same line, with a prompt that stands on its own.
        await lines.clearProviderSession(input.workflowId, input.line);
        bus.publish({
          workflowId: input.workflowId,
          line: input.line,
          at: deps.now().toISOString(),
          type: 'retry',
          attempt: 2,
          text: 'context window exceeded: retrying with a compact prompt on a fresh conversation',
        });
        prompt = input.compactPrompt ?? buildCompactPrompt(input.prompt);
        resume = null;
        continue;
      }
      if (a.providerSessionId && a.providerSessionId !== resume)
        await lines.bindProviderSession(input.workflowId, input.line, a.providerSessionId);
      const total = attempts.reduce((sum, x) => addUsage(sum, x.usage), ZERO_USAGE);
      return {
        outcome: a.outcome,
        exitCode: a.exitCode,
        providerSessionId: a.providerSessionId ?? resume,
        finalText: a.finalText,
        usage: total,
        usageCursor: cursor,
        ...(a.envelope ? { errorEnvelope: a.envelope } : {}),
        ...(a.integrityViolation ? { integrityViolation: true } : {}),
        attempts,
      };
    }
  }

  /** One step; it returns once its activity events are stored (the next step's come after them). */
  async function run(input: RunCliInput, control: RunControl = {}): Promise<RunCliResult> {
    try {
      return await step(input, control);
    } finally {
      await bus.flush?.();
    }
  }

  return { run };
}

export type CliRunner = ReturnType<typeof cliRunner>;
