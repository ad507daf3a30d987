// Codex (cli_gamma) per-session configuration: a session-scoped CODEX_HOME holding one config.toml.
//
// Codex 0.169 ignores OPENAI_BASE_URL for API-key use and `codex exec` authenticates the built-in
// OpenAI provider with CODEX_API_KEY, so the environment alone cannot point it at the model proxy.
// Instead each session gets its own CODEX_HOME (a 0700 directory inside the agent's state folder,
// `<config dir>/sessions/`, which agent/work-roots.ts keeps apart from every project; removed when
// the session ends) whose config.toml defines a custom model provider:
//
//   - base_url = the session's proxy_base_url, wire_api = "responses" (Codex 0.169 refuses "chat");
//     the proxy meters /responses like /v1/responses.
//   - env_key names the variable the agent fills with the proxy token at every turn (read at process
//     start, so a rotated token applies from the next turn). The token is never written to disk.
//   - supports_websockets = false: no Responses WebSocket attempt (which cost ~7 s per turn before
//     falling back to HTTP); a turn starts at once.
//   - Few retries and a stream idle timeout, and the `unbounded_connection_retries` feature off
//     (with it on, Codex retries "waiting for network" for ever): an unreachable or stalled proxy
//     ends the turn with `turn.failed` within seconds. One gap remains: a server that accepts the
//     connection but never sends response headers keeps Codex waiting (no header timeout in 0.169);
//     the session's turn watchdog (agent/session.ts) covers that.
//   - Everything else that could call out is off: update check, analytics, plugins (a git clone of
//     github.com/openai/plugins), apps and remote plugins (chatgpt.com), model discovery, the
//     background daemon, tool suggestions and skill dependency installs. No login is needed
//     (requires_openai_auth = false) and the fresh home has no MCP servers and no auth.json.
//     Measured with strace: the only connection Codex then attempts is to the proxy address.
import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** The provider id Codex selects (`model_provider`). */
export const CODEX_PROVIDER_ID = 'svc_proxy';

/** Retry and timeout settings: fail fast, the user sees the error and can send the message again. */
export const CODEX_LIMITS = {
  request_max_retries: 1,
  stream_max_retries: 1,
  stream_idle_timeout_ms: 60_000,
} as const;

/** Codex features that would reach a host other than the model provider, or retry without end. */
const FEATURES_OFF = [
  'plugins',
  'apps',
  'remote_plugin',
  'unbounded_connection_retries',
  'api_key_model_discovery',
  'daemon_auto_start',
  'tool_suggest',
  'skill_mcp_dependency_install',
];

/** A TOML basic string (JSON's escapes are valid TOML escapes). */
const tomlString = (value: string): string => JSON.stringify(value);

/**
 * The config.toml of a session. `keyVar` is the name (never the value) of the variable holding the
 * proxy token.
 */
export function codexConfigToml(proxyBaseUrl: string, keyVar: string): string {
  let url: URL;
  try {
    url = new URL(proxyBaseUrl);
  } catch {
    throw new Error('proxy_base_url is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error('proxy_base_url must be an http(s) URL');
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(keyVar)) throw new Error(`invalid variable name "${keyVar}"`);
  const lines = [
    '# Written by the svc agent for one remote session; removed when the session ends.',
    '# The proxy token is not here: Codex reads it from the environment variable named by env_key.',
    `model_provider = ${tomlString(CODEX_PROVIDER_ID)}`,
    'check_for_update_on_startup = false',
    '',
    '[history]',
    'persistence = "none"',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[features]',
    ...FEATURES_OFF.map((f) => `${f} = false`),
    '',
    `[model_providers.${CODEX_PROVIDER_ID}]`,
    'name = "svc model proxy"',
    `base_url = ${tomlString(proxyBaseUrl.replace(/\/+$/, ''))}`,
    `env_key = ${tomlString(keyVar)}`,
    'wire_api = "responses"',
    'requires_openai_auth = false',
    'supports_websockets = false',
    ...Object.entries(CODEX_LIMITS).map(([k, v]) => `${k} = ${v}`),
    '',
  ];
  return lines.join('\n');
}

/**
 * Makes `dir` (an empty, agent-owned 0700 directory) the session's CODEX_HOME; returns the variables
 * that point Codex at it.
 */
export function writeCodexHome(dir: string, proxyBaseUrl: string, keyVar: string): Record<string, string> {
  const file = path.join(dir, 'config.toml');
  writeFileSync(file, codexConfigToml(proxyBaseUrl, keyVar), { mode: 0o600 });
  chmodSync(file, 0o600);
  return { CODEX_HOME: dir };
}
