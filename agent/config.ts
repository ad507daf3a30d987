// Agent configuration: environment (SVC_*) > config.json > built-in defaults (spec "Agent configuration").
// The file is also the agent's only persistent state (machine_id, agent_token), so it is
// always written atomically with mode 0600.
import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { delimiter, dirname } from 'node:path';
import { type LogLevel, parseLogLevel } from './log.ts';

export interface AgentConfig {
  server_url: string;
  agent_token: string;
  machine_id: string;
  /** seconds (fractions allowed, which tests use) */
  heartbeat_interval: number;
  reconnect_base_delay: number;
  reconnect_max_delay: number;
  max_sessions: number;
  log_level: LogLevel;
  machine_name: string;
  registration_token: string;
  cli_tool: string;
  /** Overrides the executable of the adapter for `cli_tool` (not for other tools). */
  cli_path: string;
  /** Default project directory shown by the server when creating a session. */
  work_dir: string;
  /** Directories sessions may run in (agent/work-roots.ts); empty = [work_dir], or the home directory. */
  work_roots: string[];
  /** Extra non-secret variables for the CLI (e.g. HTTPS_PROXY); never overrides the proxy variables. */
  cli_env: Record<string, string>;
  /** How long the server may hold a long poll (PROTOCOL.md caps it at 25000). */
  long_poll_wait_ms: number;
  /** Seconds between SIGTERM and SIGKILL on session.stop. */
  stop_grace_period: number;
  /** Seconds a turn may go without CLI progress before it is reported (`turn_stalled`) and ended. */
  turn_stall_timeout: number;
  /**
   * `on`: every session CLI and terminal shell runs in the sandbox (agent/sandbox/), refused when it
   * cannot be had; `off`: the owner of the machine accepts running them unconfined (a warning each time).
   */
  sandbox: 'on' | 'off';
}

export type ConfigKey = keyof AgentConfig;
export type ConfigSource = 'env' | 'file' | 'default';

type Kind = 'url' | 'string' | 'seconds' | 'count' | 'ms' | 'level' | 'env-map' | 'path-list' | 'on-off';
interface KeySpec {
  kind: Kind;
  env?: string;
  def: AgentConfig[ConfigKey];
}

export const DEFAULT_SERVER_URL = 'http://127.0.0.1:19888';

// One row per key; `env` absent means "file only" (spec: machine_name, registration_token, cli_tool).
const SPEC: { [K in ConfigKey]: KeySpec } = {
  server_url: { kind: 'url', env: 'SVC_SERVER_URL', def: DEFAULT_SERVER_URL },
  agent_token: { kind: 'string', env: 'SVC_AGENT_TOKEN', def: '' },
  machine_id: { kind: 'string', env: 'SVC_MACHINE_ID', def: '' },
  heartbeat_interval: { kind: 'seconds', env: 'SVC_HEARTBEAT_INTERVAL', def: 60 },
  reconnect_base_delay: { kind: 'seconds', env: 'SVC_RECONNECT_BASE_DELAY', def: 1 },
  reconnect_max_delay: { kind: 'seconds', env: 'SVC_RECONNECT_MAX_DELAY', def: 60 },
  max_sessions: { kind: 'count', env: 'SVC_MAX_SESSIONS', def: 5 },
  log_level: { kind: 'level', env: 'SVC_LOG_LEVEL', def: 'INFO' },
  machine_name: { kind: 'string', def: '' },
  registration_token: { kind: 'string', def: '' },
  cli_tool: { kind: 'string', def: 'cli_alpha' },
  cli_path: { kind: 'string', env: 'SVC_CLI_PATH', def: '' },
  work_dir: { kind: 'string', env: 'SVC_WORK_DIR', def: '' },
  work_roots: { kind: 'path-list', env: 'SVC_WORK_ROOTS', def: [] },
  cli_env: { kind: 'env-map', def: {} },
  long_poll_wait_ms: { kind: 'ms', env: 'SVC_LONG_POLL_WAIT_MS', def: 25000 },
  stop_grace_period: { kind: 'seconds', env: 'SVC_STOP_GRACE_PERIOD', def: 5 },
  turn_stall_timeout: { kind: 'seconds', env: 'SVC_TURN_STALL_TIMEOUT', def: 120 },
  sandbox: { kind: 'on-off', env: 'SVC_AGENT_SANDBOX', def: 'on' },
};

export const CONFIG_KEYS = Object.keys(SPEC) as ConfigKey[];

export class ConfigError extends Error {}

function coerce(key: ConfigKey, kind: Kind, raw: unknown, where: string): AgentConfig[ConfigKey] {
  const bad = (what: string): never => {
    throw new ConfigError(`${where} must be ${what} (got ${JSON.stringify(raw)})`);
  };
  switch (kind) {
    case 'string':
      if (typeof raw !== 'string') bad('a string');
      return (raw as string).trim();
    case 'url': {
      if (typeof raw !== 'string') bad('an http(s) URL');
      let url: URL;
      try {
        url = new URL((raw as string).trim());
      } catch {
        return bad('an http(s) URL');
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') bad('an http(s) URL');
      // A loop rather than /\/+$/ (quadratic on long runs of slashes).
      const text = url.toString();
      let end = text.length;
      while (end > 0 && text[end - 1] === '/') end--;
      return text.slice(0, end);
    }
    case 'seconds':
    case 'ms':
    case 'count': {
      const n =
        typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
      if (!Number.isFinite(n) || n <= 0) bad('a positive number');
      if (kind === 'count' && !Number.isInteger(n)) bad('a positive integer');
      if (kind === 'ms' && key === 'long_poll_wait_ms' && n > 25000) bad('at most 25000');
      return n;
    }
    case 'level':
      if (typeof raw !== 'string') bad('a log level');
      try {
        return parseLogLevel(raw as string);
      } catch {
        return bad('one of DEBUG, INFO, WARNING, ERROR');
      }
    case 'on-off':
      if (raw !== 'on' && raw !== 'off') bad('on or off');
      return raw as 'on' | 'off';
    case 'path-list': {
      // The environment gives one string, split like PATH (":" or ";" on Windows); the file an array.
      const items = typeof raw === 'string' ? raw.split(delimiter) : raw;
      if (!Array.isArray(items) || items.some((p) => typeof p !== 'string')) bad('a list of directories');
      return (items as string[]).map((p) => p.trim()).filter((p) => p !== '');
    }
    case 'env-map': {
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) bad('an object of strings');
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
        if (typeof v !== 'string') bad('an object of strings');
        out[k] = v as string;
      }
      return out;
    }
  }
}

export interface LoadedConfig {
  config: AgentConfig;
  sources: Record<ConfigKey, ConfigSource>;
  store: ConfigStore;
}

/** Reads and writes config.json; unknown keys in the file are preserved. */
export class ConfigStore {
  data: Record<string, unknown>;

  constructor(readonly path: string) {
    this.data = ConfigStore.read(path);
  }

  private static read(path: string): Record<string, unknown> {
    if (!existsSync(path)) return {};
    let parsed: unknown;
    try {
      // Tolerate a BOM (editors and Windows PowerShell 5.1 write one).
      parsed = JSON.parse(readFileSync(path, 'utf8').replace(/^\uFEFF/, ''));
    } catch (err) {
      throw new ConfigError(`config file ${path} is not valid JSON: ${(err as Error).message}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new ConfigError(`config file ${path} must contain a JSON object`);
    }
    return parsed as Record<string, unknown>;
  }

  /** Sets and removes keys, then writes the file atomically with mode 0600. */
  update(set: Partial<Record<ConfigKey, unknown>>, remove: ConfigKey[] = []): void {
    for (const [k, v] of Object.entries(set)) this.data[k] = v;
    for (const k of remove) delete this.data[k];
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    const tmp = `${this.path}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(this.data, null, 2) + '\n', { mode: 0o600 });
    // rename keeps the 0600 mode of the temp file; chmod covers a umask that narrowed it oddly.
    renameSync(tmp, this.path);
    chmodSync(this.path, 0o600);
  }
}

export function loadConfig(path: string, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  const store = new ConfigStore(path);
  const config = {} as Record<ConfigKey, unknown>;
  const sources = {} as Record<ConfigKey, ConfigSource>;
  for (const key of CONFIG_KEYS) {
    const spec = SPEC[key];
    const envValue = spec.env ? env[spec.env] : undefined;
    if (spec.env && envValue !== undefined && envValue !== '') {
      config[key] = coerce(key, spec.kind, envValue, `environment variable ${spec.env}`);
      sources[key] = 'env';
    } else if (store.data[key] !== undefined && store.data[key] !== null) {
      config[key] = coerce(key, spec.kind, store.data[key], `"${key}" in ${path}`);
      sources[key] = 'file';
    } else {
      config[key] = spec.kind === 'env-map' ? {} : spec.kind === 'path-list' ? [] : spec.def;
      sources[key] = 'default';
    }
  }
  const result = config as unknown as AgentConfig;
  if (result.reconnect_max_delay < result.reconnect_base_delay) {
    throw new ConfigError(
      `reconnect_max_delay (${result.reconnect_max_delay}) must be >= reconnect_base_delay (${result.reconnect_base_delay})`,
    );
  }
  return { config: result, sources, store };
}

/** The spec says machine_id defaults to a generated UUID; persist it so it survives restarts. */
export function ensureMachineId(loaded: LoadedConfig): string {
  if (!loaded.config.machine_id) {
    loaded.config.machine_id = randomUUID();
    loaded.sources.machine_id = 'file';
    loaded.store.update({ machine_id: loaded.config.machine_id });
  }
  return loaded.config.machine_id;
}
