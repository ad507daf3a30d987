// CLI adapters: how each supported AI CLI is started, resumed, fed and pointed at the model proxy.
// The spec names tools neutrally; agent/README.md maps them to real CLIs:
//   cli_alpha -> OpenClaude (`openclaude`), OpenAI-compatible vars, Claude-Code stream-json protocol
//   cli_beta  -> Claude Code (`claude`), Anthropic vars
//   cli_gamma -> Codex CLI (`codex exec --json`), OpenAI vars, one process per turn
//   anything else -> generic stream-json adapter on OpenAI vars, executable = config cli_path

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
}

const OPENAI = { keyVar: 'OPENAI_API_KEY', baseUrlVar: 'OPENAI_BASE_URL' };
const ANTHROPIC = { keyVar: 'ANTHROPIC_API_KEY', baseUrlVar: 'ANTHROPIC_BASE_URL' };
/** Kept for the `<provider_c>` row of the key store; no bundled CLI uses it yet. */
export const GEMINI = { keyVar: 'GEMINI_API_KEY', baseUrlVar: 'GOOGLE_GEMINI_BASE_URL' };

const modelArgs = (model?: string): string[] => (model ? ['--model', model] : []);

// --- Claude-Code style stream-json (used by Claude Code, OpenClaude and the generic adapter) ---

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
    return { turnEnded: true, ...(usage ? { usage } : {}) };
  }
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

// --- Codex `exec --json`: one process per turn, prompt on stdin, JSONL events on stdout ---

const CODEX_BASE = ['exec', '--json', '--skip-git-repo-check', '--sandbox', 'workspace-write'];

const codexAdapter: CliAdapter = {
  id: 'cli_gamma',
  executable: 'codex',
  npmPackage: '@openai/codex',
  ...OPENAI,
  extraEnv: {},
  mode: 'per_turn',
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
    if (event.type === 'turn.failed') return { turnEnded: true };
    return {};
  },
};

const ADAPTERS: Record<string, CliAdapter> = {
  // OpenClaude only talks to an OpenAI-compatible endpoint when CLAUDE_CODE_USE_OPENAI=1.
  cli_alpha: streamJsonAdapter(
    'cli_alpha',
    'openclaude',
    '@gitlawb/openclaude',
    OPENAI,
    { CLAUDE_CODE_USE_OPENAI: '1' },
    STREAM_EXTRA,
  ),
  cli_beta: streamJsonAdapter('cli_beta', 'claude', '@anthropic-ai/claude-code', ANTHROPIC, {}, STREAM_EXTRA),
  cli_gamma: codexAdapter,
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
