// CLI adapters: how each supported AI CLI is started, resumed, fed and pointed at the model proxy.
// The spec names tools neutrally; agent/README.md maps them to real CLIs:
//   cli_alpha -> Qwen Code (`qwen`), OpenAI-compatible vars, Claude-Code stream-json protocol on
//                stdin/stdout, settings in a per-session QWEN_HOME (agent/cli-home.ts)
//   cli_beta  -> Claude Code (`claude`), Anthropic vars
//   cli_gamma -> Codex CLI (`codex exec --json`), custom provider in a per-session CODEX_HOME, one
//                process per turn
//   cli_delta -> Gemini CLI (`gemini --output-format stream-json`), Gemini vars, API-key auth and
//                trust in a per-session GEMINI_CLI_HOME (agent/cli-home.ts), one process per turn
//   anything else -> generic stream-json adapter on OpenAI vars, executable = config cli_path

import { writeGeminiHome, writeQwenHome } from './cli-home.ts';
import { writeCodexHome } from './codex-home.ts';

/** stream: one long-lived process fed stream-json lines on stdin. per_turn: one process per message. */
export type InputMode = 'stream' | 'per_turn';

/** What the agent needs to know about one line the CLI printed. */
export interface LineInfo {
  conversationId?: string;
  turnEnded?: boolean;
  /** A tool-permission request the user must answer (session.permission_response). */
  permissionRequest?: { requestId: string; input: unknown };
  /** Token usage of the turn that just ended, as the CLI reports it. */
  usage?: TurnUsage;
  /** Where the CLI says its model credential comes from (Claude-Code init line `apiKeySource`). */
  keySource?: string;
  /** The turn ended (or the CLI reported) an error: a short message for the session. */
  turnError?: string;
  /**
   * The line is the CLI waiting on something (a retry of a failed model call), not progress: it does
   * not reset the turn watchdog (agent/session.ts), so a CLI stuck in its own retry loop is reported.
   */
  noProgress?: boolean;
}

export interface TurnUsage {
  input_tokens: number;
  output_tokens: number;
  cache_tokens: number;
  model?: string;
}

/** A non-negative safe integer, or 0: CLI output is not trusted to be well-formed. */
const tokenCount = (v: unknown): number =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : 0;

function usageOf(raw: unknown, cacheKeys: string[], model?: unknown): TurnUsage | undefined {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const u = raw as Record<string, unknown>;
  const usage: TurnUsage = {
    input_tokens: tokenCount(u.input_tokens),
    output_tokens: tokenCount(u.output_tokens),
    cache_tokens: cacheKeys.reduce((sum, k) => sum + tokenCount(u[k]), 0),
  };
  if (typeof model === 'string' && model) usage.model = model.slice(0, 100);
  return usage.input_tokens + usage.output_tokens + usage.cache_tokens > 0 ? usage : undefined;
}

export interface CliAdapter {
  id: string;
  /** Default executable looked up on PATH. */
  executable: string;
  /** npm package the installer uses for `--install-cli`. */
  npmPackage: string;
  keyVar: string;
  baseUrlVar: string;
  /** Non-secret variables the CLI needs to use the variables above. */
  extraEnv: Record<string, string>;
  mode: InputMode;
  startArgs(model?: string): string[];
  resumeArgs(conversationId: string, model?: string): string[];
  /** Bytes written to stdin for one chat message (per_turn: the whole stdin, then EOF). */
  formatInput(content: string): string;
  formatPermissionResponse(
    requestId: string,
    decision: 'allow' | 'deny',
    input: unknown,
    message?: string,
  ): string;
  inspect(event: Record<string, unknown>): LineInfo;
  /**
   * Per-session files the CLI reads (e.g. Codex's CODEX_HOME): written into `dir`, an empty 0700
   * directory the session creates in the agent's state folder before the first CLI process and removes
   * when the session ends. Returns the variables pointing the CLI at them. Never sees the proxy token.
   */
  prepareSessionDir?(dir: string, proxyBaseUrl: string): Record<string, string>;
}

const OPENAI = { keyVar: 'OPENAI_API_KEY', baseUrlVar: 'OPENAI_BASE_URL' };
const ANTHROPIC = { keyVar: 'ANTHROPIC_API_KEY', baseUrlVar: 'ANTHROPIC_BASE_URL' };
/** The `<provider_c>` variables (Gemini CLI, cli_delta). */
export const GEMINI = { keyVar: 'GEMINI_API_KEY', baseUrlVar: 'GOOGLE_GEMINI_BASE_URL' };

const modelArgs = (model?: string): string[] => (model ? ['--model', model] : []);

// --- Claude-Code style stream-json (used by Claude Code, Qwen Code and the generic adapter) ---

function streamJsonUserLine(content: string): string {
  return JSON.stringify({ type: 'user', message: { role: 'user', content } }) + '\n';
}

function streamJsonPermissionLine(
  requestId: string,
  decision: 'allow' | 'deny',
  input: unknown,
  message?: string,
): string {
  // Claude Code's control protocol: "allow" must echo the (possibly edited) tool input back.
  const response =
    decision === 'allow'
      ? { behavior: 'allow', updatedInput: input ?? {} }
      : { behavior: 'deny', message: message || 'Denied by the user' };
  return (
    JSON.stringify({
      type: 'control_response',
      response: { subtype: 'success', request_id: requestId, response },
    }) + '\n'
  );
}

function streamJsonInspect(event: Record<string, unknown>): LineInfo {
  if (event.type === 'system' && event.subtype === 'init' && typeof event.session_id === 'string') {
    const keySource = typeof event.apiKeySource === 'string' ? event.apiKeySource.slice(0, 100) : undefined;
    return { conversationId: event.session_id, ...(keySource ? { keySource } : {}) };
  }
  if (event.type === 'result') {
    const usage = usageOf(
      event.usage,
      ['cache_read_input_tokens', 'cache_creation_input_tokens'],
      event.model,
    );
    const error = streamJsonResultError(event);
    return { turnEnded: true, ...(usage ? { usage } : {}), ...(error ? { turnError: error } : {}) };
  }
  // Claude Code announces each retry of a failed model call (`system`/`api_retry`) and keeps going.
  if (event.type === 'system' && event.subtype === 'api_retry') return { noProgress: true };
  const request = event.request as Record<string, unknown> | undefined;
  if (
    event.type === 'control_request' &&
    request?.subtype === 'can_use_tool' &&
    typeof event.request_id === 'string'
  ) {
    return { permissionRequest: { requestId: event.request_id, input: request.input } };
  }
  return {};
}

/**
 * The error of a `result` line, if any: `is_error: true` (an API error such as a refused connection or
 * a 4xx from the proxy; `result` holds the CLI's message) or an `error_*` subtype (error_max_turns,
 * error_during_execution, ...).
 */
function streamJsonResultError(event: Record<string, unknown>): string | undefined {
  const subtype = typeof event.subtype === 'string' ? event.subtype : '';
  if (event.is_error !== true && !subtype.startsWith('error')) return undefined;
  const parts = [
    typeof event.result === 'string' && event.result ? event.result : '',
    Array.isArray(event.errors) ? event.errors.filter((e) => typeof e === 'string').join('; ') : '',
  ].filter(Boolean);
  const reason =
    parts.join('; ') || (subtype && subtype !== 'success' ? subtype : 'the CLI reported an error');
  return reason.slice(0, 500);
}

// Spec start arguments are `--print --output-format stream-json [--model M]`. The extra flags make a
// long-lived process read stream-json turns from stdin (`--verbose` is required by Claude Code for
// stream-json output in print mode) and route tool-permission prompts through stdin/stdout.
const STREAM_EXTRA = ['--input-format', 'stream-json', '--verbose', '--permission-prompt-tool', 'stdio'];

function streamJsonAdapter(
  id: string,
  executable: string,
  npmPackage: string,
  vars: { keyVar: string; baseUrlVar: string },
  extraEnv: Record<string, string>,
  extraArgs: string[],
): CliAdapter {
  const base = ['--print', '--output-format', 'stream-json', ...extraArgs];
  return {
    id,
    executable,
    npmPackage,
    ...vars,
    extraEnv,
    mode: 'stream',
    startArgs: (model) => [...base, ...modelArgs(model)],
    resumeArgs: (conversationId, model) => [...base, '--resume', conversationId, ...modelArgs(model)],
    formatInput: streamJsonUserLine,
    formatPermissionResponse: streamJsonPermissionLine,
    inspect: streamJsonInspect,
  };
}

// --- Qwen Code (cli_alpha): the stream-json protocol above on the OpenAI-compatible variables ---

// Qwen Code has no `--print` (its argument parser rejects it); its non-interactive equivalent of the
// spec's `--print --output-format stream-json` is `--input-format stream-json --output-format
// stream-json`: one long-lived process, one stream-json user line per turn, the same init / assistant /
// result / control_request (can_use_tool) lines as Claude Code, `--resume <session_id>`.
// `--auth-type openai` pins OpenAI-compatible auth whatever a settings file selects (never Qwen OAuth).
const QWEN_BASE = [
  '--input-format',
  'stream-json',
  '--output-format',
  'stream-json',
  '--auth-type',
  'openai',
];

/** Documented switches; they override any settings file (the session's QWEN_HOME sets them too). */
const QWEN_QUIET_ENV: Record<string, string> = {
  QWEN_TELEMETRY_ENABLED: 'false',
  QWEN_USAGE_STATISTICS_ENABLED: 'false',
};

const qwenAdapter: CliAdapter = {
  ...streamJsonAdapter('cli_alpha', 'qwen', '@qwen-code/qwen-code', OPENAI, QWEN_QUIET_ENV, []),
  startArgs: (model) => [...QWEN_BASE, ...modelArgs(model)],
  resumeArgs: (conversationId, model) => [...QWEN_BASE, '--resume', conversationId, ...modelArgs(model)],
  prepareSessionDir: (dir) => writeQwenHome(dir),
  inspect(event) {
    const info = streamJsonInspect(event);
    // Qwen Code's input_tokens include the cached prompt tokens (OpenAI's prompt_tokens); Claude
    // Code's do not. Counted once, as cache tokens.
    if (info.usage && event.usage && typeof event.usage === 'object') {
      const cached = tokenCount((event.usage as Record<string, unknown>).cache_read_input_tokens);
      info.usage.input_tokens = Math.max(0, info.usage.input_tokens - cached);
    }
    // Its error results carry the reason in `error.message` (no `result` text).
    const error = event.error as Record<string, unknown> | undefined;
    if (info.turnError && typeof error?.message === 'string' && error.message)
      info.turnError = error.message.slice(0, 500);
    return info;
  },
};

// --- Gemini CLI (cli_delta): one process per turn, prompt on stdin, JSONL events on stdout ---

/** Used when the session names no model (Gemini CLI's own default routes between several). */
export const GEMINI_DEFAULT_MODEL = 'gemini-2.5-flash';

// Headless mode (stdin is not a terminal) with stream-json output: `init` (session_id, model),
// `message` deltas, `tool_use` / `tool_result`, `error` (warnings), and one `result` per run.
// `--approval-mode auto_edit`: file edits in the project run, shell commands are refused (headless
// Gemini cannot ask), like Codex's workspace-write sandbox.
const GEMINI_BASE = ['--output-format', 'stream-json', '--approval-mode', 'auto_edit'];

/** Workspace trust and telemetry through the documented variables (the settings file is in cli-home.ts). */
const GEMINI_ENV: Record<string, string> = {
  GEMINI_CLI_TRUST_WORKSPACE: 'true',
  GEMINI_TELEMETRY_ENABLED: 'false',
};

const geminiModelArgs = (model?: string): string[] => ['--model', model || GEMINI_DEFAULT_MODEL];

const geminiAdapter: CliAdapter = {
  id: 'cli_delta',
  executable: 'gemini',
  npmPackage: '@google/gemini-cli',
  ...GEMINI,
  extraEnv: GEMINI_ENV,
  mode: 'per_turn',
  prepareSessionDir: (dir) => writeGeminiHome(dir),
  startArgs: (model) => [...GEMINI_BASE, ...geminiModelArgs(model)],
  resumeArgs: (sessionId, model) => [...GEMINI_BASE, ...geminiModelArgs(model), '--resume', sessionId],
  // The whole stdin is the prompt, which keeps user text out of `ps` output.
  formatInput: (content) => content,
  // Headless Gemini never asks; tools that need approval are refused (see GEMINI_BASE).
  formatPermissionResponse: () => '',
  inspect: geminiInspect,
};

function geminiInspect(event: Record<string, unknown>): LineInfo {
  if (event.type === 'init' && typeof event.session_id === 'string')
    return { conversationId: event.session_id };
  if (event.type === 'result') {
    const usage = geminiUsage(event.stats);
    const info: LineInfo = { turnEnded: true, ...(usage ? { usage } : {}) };
    if (event.status !== 'success') {
      const error = event.error as Record<string, unknown> | undefined;
      const message =
        typeof error?.message === 'string' && error.message
          ? error.message
          : `the Gemini CLI turn ended with status ${String(event.status)}`;
      info.turnError = message.slice(0, 500);
    }
    return info;
  }
  // Non-fatal warnings: not progress of the turn (turn watchdog).
  if (event.type === 'error') return { noProgress: true };
  return {};
}

/**
 * `result.stats`: input_tokens (cached included), input (not cached), cached, output_tokens, and a
 * per-model breakdown whose only key names the model when one model answered.
 */
function geminiUsage(raw: unknown): TurnUsage | undefined {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const stats = raw as Record<string, unknown>;
  const cached = tokenCount(stats.cached);
  const input =
    typeof stats.input === 'number'
      ? tokenCount(stats.input)
      : Math.max(0, tokenCount(stats.input_tokens) - cached);
  const models =
    stats.models && typeof stats.models === 'object' && !Array.isArray(stats.models)
      ? Object.keys(stats.models)
      : [];
  const usage: TurnUsage = {
    input_tokens: input,
    output_tokens: tokenCount(stats.output_tokens),
    cache_tokens: cached,
  };
  if (models.length === 1) usage.model = models[0]!.slice(0, 100);
  return usage.input_tokens + usage.output_tokens + usage.cache_tokens > 0 ? usage : undefined;
}

// --- Codex `exec --json`: one process per turn, prompt on stdin, JSONL events on stdout ---

const CODEX_BASE = ['exec', '--json', '--skip-git-repo-check', '--sandbox', 'workspace-write'];

const codexAdapter: CliAdapter = {
  id: 'cli_gamma',
  executable: 'codex',
  npmPackage: '@openai/codex',
  // OPENAI_API_KEY holds the proxy token and is the custom provider's env_key; Codex 0.169 ignores
  // OPENAI_BASE_URL (set anyway, harmless): the session's CODEX_HOME (agent/codex-home.ts) names the proxy.
  ...OPENAI,
  extraEnv: {},
  mode: 'per_turn',
  prepareSessionDir: (dir, proxyBaseUrl) => writeCodexHome(dir, proxyBaseUrl, OPENAI.keyVar),
  // `-` = read the prompt from stdin, which keeps user text out of `ps` output.
  startArgs: (model) => [...CODEX_BASE, ...modelArgs(model), '-'],
  resumeArgs: (threadId, model) => [...CODEX_BASE, ...modelArgs(model), 'resume', threadId, '-'],
  formatInput: (content) => content,
  // codex exec never asks (approval policy "never" in exec mode); nothing to write.
  formatPermissionResponse: () => '',
  inspect(event) {
    if (event.type === 'thread.started' && typeof event.thread_id === 'string') {
      return { conversationId: event.thread_id };
    }
    if (event.type === 'turn.completed') {
      const usage = usageOf(event.usage, ['cached_input_tokens']);
      return { turnEnded: true, ...(usage ? { usage } : {}) };
    }
    if (event.type === 'turn.failed') {
      return { turnEnded: true, turnError: codexErrorMessage(event.error) ?? 'the Codex turn failed' };
    }
    // `error` events: a retry notice ("Reconnecting... 1/1 (...)") or the error a `turn.failed`
    // repeats next. Shown as they are (stdout); they are waiting, not progress (turn watchdog).
    if (event.type === 'error') return { noProgress: true };
    return {};
  },
};

/** `turn.failed.error` is `{message}`; anything else is not trusted. */
function codexErrorMessage(error: unknown): string | undefined {
  const message = error && typeof error === 'object' ? (error as Record<string, unknown>).message : undefined;
  return typeof message === 'string' && message ? message.slice(0, 500) : undefined;
}

/** Claude Code: everything off that would reach a host other than the proxy (see cli_beta below). */
const CLAUDE_CODE_QUIET_ENV: Record<string, string> = {
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  DISABLE_TELEMETRY: '1',
  DISABLE_ERROR_REPORTING: '1',
  DISABLE_AUTOUPDATER: '1',
  DISABLE_BUG_COMMAND: '1',
};

const ADAPTERS: Record<string, CliAdapter> = {
  // Qwen Code (the OpenClaude package this id used to name is not on the npm registry).
  cli_alpha: qwenAdapter,
  // Claude Code's documented switches: no telemetry, error reporting, update checks or other
  // non-essential traffic, so its only network peer is ANTHROPIC_BASE_URL (the proxy); test/integration/
  // real-cli-claude.test.ts traces its connect() calls to prove it.
  cli_beta: streamJsonAdapter(
    'cli_beta',
    'claude',
    '@anthropic-ai/claude-code',
    ANTHROPIC,
    CLAUDE_CODE_QUIET_ENV,
    STREAM_EXTRA,
  ),
  cli_gamma: codexAdapter,
  cli_delta: geminiAdapter,
};

export const KNOWN_CLI_TOOLS = Object.keys(ADAPTERS);
export const DEFAULT_CLI_TOOL = 'cli_alpha';

/** cli_tool values are used in file names and logs; keep them tame. */
export function isValidCliToolName(name: string): boolean {
  return /^[A-Za-z0-9_.-]{1,64}$/.test(name);
}

/**
 * Adapter for a tool id. An unregistered id gets the generic adapter: spec start arguments only
 * (an unknown CLI may reject our extra flags), OpenAI variables, and no default executable, so it
 * runs only the executable the machine owner configured as `cli_path`.
 */
export function getAdapter(cliTool: string): CliAdapter {
  const known = ADAPTERS[cliTool];
  if (known) return known;
  return streamJsonAdapter(cliTool, '', '', OPENAI, {}, []);
}

/**
 * The executable to run: `cli_path` replaces the executable of the configured `cli_tool`
 * (and is the only possible executable of a generic adapter); other tools use their own name.
 */
export function resolveExecutable(
  adapter: CliAdapter,
  config: { cli_tool: string; cli_path: string },
): string | null {
  const isGeneric = !ADAPTERS[adapter.id];
  if (config.cli_path && (adapter.id === config.cli_tool || isGeneric)) return config.cli_path;
  return adapter.executable || null;
}

// Copied from the agent's environment; everything else (including any secret) is left behind.
const INHERITED_VARS = ['PATH', 'HOME', 'LANG', 'TERM', 'USER', 'SHELL', 'TMPDIR'];
// Windows cannot start most programs without these; they carry no secrets.
const WINDOWS_VARS = [
  'SystemRoot',
  'ComSpec',
  'PATHEXT',
  'USERPROFILE',
  'APPDATA',
  'LOCALAPPDATA',
  'TEMP',
  'TMP',
];

export function buildCliEnv(
  adapter: CliAdapter,
  parentEnv: NodeJS.ProcessEnv,
  proxyToken: string,
  proxyBaseUrl: string,
  cliEnv: Record<string, string> = {},
  platform: NodeJS.Platform = process.platform,
): Record<string, string> {
  const env: Record<string, string> = {};
  const names = platform === 'win32' ? [...INHERITED_VARS, ...WINDOWS_VARS] : INHERITED_VARS;
  for (const name of names) {
    const value = parentEnv[name];
    if (value !== undefined) env[name] = value;
  }
  Object.assign(env, cliEnv, adapter.extraEnv);
  // Last, so neither cli_env nor anything else can point the CLI away from the proxy.
  env[adapter.keyVar] = proxyToken;
  env[adapter.baseUrlVar] = proxyBaseUrl;
  return env;
}
