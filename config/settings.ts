// Every setting of the service, resolved once: environment > config.json / config.yaml in the data
// directory > default. Entry points load them; every layer may import the type (this module is the
// bottom layer: it imports nothing of ours).
//
// Two shapes:
// - flat settings (`PORT`, `SVC_PUBLIC_URL`, …): env var of the same name, or the key in either case
//   in the file (`port` or `PORT`);
// - nested sections (`egress`, `remote`, `chatplat_a`, `chatplat_b`, `alerts`, `autonomous`, `agent`):
//   a JSON/YAML object in the file (`{"chatplat_a": {"app_key": "…"}}`), and each key overridable from
//   the environment as `SVC_<SECTION>__<KEY>` in upper case (`SVC_CHATPLAT_A__APP_KEY`,
//   `SVC_EGRESS__ALLOW_HOSTS`). Lists take a comma-separated string in the environment.
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { z } from 'zod';

const flatSchema = z.object({
  NODE_ENV: z.string().default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(19888),
  HOST: z.string().default('127.0.0.1'),
  SVC_DATA_DIR: z.string().default('./data'),
  DATABASE_URL: z.string().optional(),
  /**
   * PostgreSQL: the most connections one process's pool opens (API instance, worker, `npm start`).
   * Size it so that (API instances + workers) x this stays below the server's max_connections.
   */
  SVC_DB_POOL_MAX: z.coerce.number().int().min(1).max(1000).default(10),
  TEMPORAL_ADDRESS: z.string().optional(),
  TEMPORAL_NAMESPACE: z.string().default('default'),
  TEMPORAL_TASK_QUEUE: z.string().default('svc'),
  /**
   * How long the API's Temporal client keeps trying to connect before a request that needs Temporal
   * answers 503 "Background processing is unavailable" (milliseconds). Tests of an unreachable
   * cluster shorten it.
   */
  SVC_TEMPORAL_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(5000),
  /**
   * How long the API's Temporal client retries a call while Temporal is unreachable before the request
   * answers 503 with Retry-After (milliseconds; the client's own default is about 20 s).
   */
  SVC_TEMPORAL_RETRY_BUDGET_MS: z.coerce.number().int().min(0).max(600_000).default(3000),
  /**
   * How long a workflow task waits on the sticky queue of the worker that ran the workflow last before
   * any worker may take it (milliseconds; the Temporal SDK's default, 10 s): after a worker dies, its
   * workflows' next steps wait this long. Tests that kill a worker shorten it.
   */
  SVC_TEMPORAL_STICKY_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  /**
   * Longest time the worker holds back an activity heartbeat (milliseconds). Unset: the SDK's own
   * throttle, 80% of the activity's heartbeat timeout (12 s for a CLI step). A cancelled activity learns
   * of its cancellation only when a heartbeat goes out: tests of controls shorten it.
   */
  SVC_TEMPORAL_HEARTBEAT_THROTTLE_MS: z.coerce.number().int().min(10).max(600_000).optional(),
  /**
   * Security of the connection to the Temporal cluster at TEMPORAL_ADDRESS (the same names as the
   * `temporal` CLI's environment configuration), honoured by the API's client and the worker alike
   * (config/temporal-connection.ts). TEMPORAL_TLS unset: TLS is on when any option below is set.
   * Certificates and the key are read from files; TEMPORAL_API_KEY (Temporal Cloud) is never logged.
   */
  TEMPORAL_TLS: z
    .preprocess(
      (v) => (typeof v === 'string' ? ['1', 'true', 'yes', 'on'].includes(v.trim().toLowerCase()) : v),
      z.boolean(),
    )
    .optional(),
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: z.string().min(1).optional(),
  TEMPORAL_TLS_SERVER_NAME: z.string().min(1).max(253).optional(),
  TEMPORAL_TLS_CLIENT_CERT_PATH: z.string().min(1).optional(),
  TEMPORAL_TLS_CLIENT_KEY_PATH: z.string().min(1).optional(),
  TEMPORAL_API_KEY: z.string().min(1).optional(),
  TEMPORAL_CLI_PATH: z.string().optional(),
  SVC_ENCRYPTION_KEY: z.string().optional(),
  SECRET_KEY: z.string().optional(),
  SVC_UPLOAD_AUTH_KEY: z.string().optional(),
  /**
   * The shared upload key (SVC_UPLOAD_AUTH_KEY) is for trusted server-side collectors: rows sent with it
   * are attributed by their own sender fields, so it can write as any user of any tenant. 'off' refuses
   * it (403) even when SVC_UPLOAD_AUTH_KEY is set; personal upload tokens keep working either way.
   */
  SVC_UPLOAD_SHARED_KEY: z.enum(['on', 'off']).default('on'),
  SVC_ADMIN_USERNAME: z.string().default('admin'),
  SVC_ADMIN_PASSWORD: z.string().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Auth session lifetime in hours. */
  SVC_SESSION_LIFETIME_HOURS: z.coerce.number().positive().default(24),
  /** Per-instance cache of authenticated sessions (db/auth-session-cache.ts): max entries, 0 = off. */
  SVC_AUTH_SESSION_CACHE_SIZE: z.coerce.number().int().min(0).default(10_000),
  /** Longest an entry is served without a re-read (the bound if an invalidation is lost). */
  SVC_AUTH_SESSION_CACHE_TTL_MS: z.coerce.number().int().positive().default(30_000),
  /** Per-instance cache of the model proxy's call contexts (services/proxy/call-context-cache.ts): max entries, 0 = off. */
  SVC_PROXY_CONTEXT_CACHE_SIZE: z.coerce.number().int().min(0).default(10_000),
  /** Longest a call context is served without a re-read (the bound for changes that are not pushed). */
  SVC_PROXY_CONTEXT_CACHE_TTL_MS: z.coerce.number().int().positive().default(1_000),
  /** PostgreSQL: the message rows of proxied calls are written by a worker thread (services/usage/message-writer-thread.ts); 'off' = on the API's thread. */
  SVC_USAGE_WRITER_THREAD: z.enum(['on', 'off']).default('on'),
  /** SQLite: 'thread' writes the proxied calls' message rows from the writer thread too, on its own WAL connection; 'inline' (default) on the API's thread. */
  SVC_PROXY_ACCOUNTING: z.enum(['thread', 'inline']).default('inline'),
  /**
   * Model-proxy quota leases (services/quota/leases.ts): requests one instance reserves at once; 0 = off.
   * Overshoot bound (README "Quota leases"): request limits stay exact and token limits are passed by
   * the calls in flight, as without leases (leased room is reserved in the database, and a lease is
   * granted only while the quota has room for 4 of them). A quota lowered through the API is pushed to
   * every instance, which returns its leases at once; one lowered with raw SQL can be passed by at most
   * N instances x this many requests (and x SVC_QUOTA_LEASE_TOKENS tokens) until the leases end (2 s).
   * 64: above one user's concurrency, so a lease is asked for once per 64 calls, with a 4x smaller bound
   * than the 256 of the issue-31 measurement; limits under 256 requests a day are always exact.
   */
  SVC_QUOTA_LEASE_REQUESTS: z.coerce.number().int().min(0).max(10_000).default(64),
  /** Tokens a lease reserves; its calls stop taking from it once they used this many (limits under 4x are exact). */
  SVC_QUOTA_LEASE_TOKENS: z.coerce.number().int().min(1).default(50_000),
  /** Express `trust proxy` value: hops or a list of addresses whose X-Forwarded-* are believed. */
  SVC_TRUST_PROXY: z.string().default('loopback'),
  /** Override the embedded Temporal server's ports from temporal-dev.yaml (0 = pick a free port). */
  SVC_TEMPORAL_DEV_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  SVC_TEMPORAL_UI_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Public URL agents use to reach this server (defaults to http://HOST:PORT). */
  SVC_PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  /**
   * This instance's own address, as browsers and agents reach it: the terminal relay registers it as the
   * owner of the relays it holds (close code 3010 sends browsers there). Default: the listen URL.
   */
  /**
   * The other API instances' addresses (comma-separated http(s) URLs: their SVC_INSTANCE_URL), allowed
   * in the web app's Content-Security-Policy `connect-src` so a terminal redirected with close code 3010
   * can reconnect to its owner, and accepted as an Origin by this instance's terminal relay (their pages
   * reconnect here). Empty: the page may connect to this instance only.
   */
  SVC_WEB_CONNECT_ORIGINS: z
    .preprocess(
      (v) =>
        typeof v === 'string'
          ? v
              .split(',')
              .map((x) => x.trim())
              .filter(Boolean)
          : v,
      z.array(z.url({ protocol: /^https?$/ }).max(100)).max(50),
    )
    .default([]),
  SVC_INSTANCE_URL: z
    .url({ protocol: /^https?$/ })
    .max(100)
    .optional(),
  /** Where checkouts and other work files live (default `<data dir>/workspaces`; checked by /readyz). */
  SVC_WORKSPACE_DIR: z.string().optional(),
  /** How often the PostgreSQL `session_stats` materialized view is refreshed (a Temporal schedule). */
  SVC_SESSION_STATS_REFRESH_MINUTES: z.coerce.number().int().min(1).max(1440).default(5),
  /** Interval of the keepalive comment on GET /api/alerts/stream (milliseconds). */
  SVC_ALERT_KEEPALIVE_MS: z.coerce.number().int().min(10).max(300_000).default(15_000),
  /** Interval of the visible keepalive event on the autonomous activity stream (ms; spec: 30 s). */
  SVC_AUTONOMOUS_STREAM_KEEPALIVE_MS: z.coerce.number().int().min(10).max(300_000).default(30_000),
  /** Extra Host names the API answers for, besides SVC_PUBLIC_URL's, HOST and loopback names. */
  SVC_ALLOWED_HOSTS: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  /**
   * Where autonomous workflows may work: a project_path must resolve inside one of these directories
   * (a path list separated like PATH: `:` on POSIX). Unset: `<data dir>/projects`.
   */
  SVC_AUTONOMOUS_PROJECT_ROOTS: z.string().optional(),
  /** Task timeout of one autonomous agent run, in seconds (spec "Limits": 3600). */
  AUTONOMOUS_TASK_TIMEOUT: z.coerce
    .number()
    .int()
    .min(60)
    .max(7 * 86_400)
    .default(3600),
  /** Changed files allowed in one automatic change (spec "Limits": 60). */
  AUTONOMOUS_MAX_CHANGED_FILES: z.coerce.number().int().min(1).max(100_000).default(60),
  /**
   * Installed runtimes for repository-declared versions (.nvmrc, .tool-versions, engines.node): Node
   * versions as `<dir>/node/<version>/bin/node`; CI and pre-commit hooks use the declared one when it
   * is there, else the service's own Node with a note in the log (services/forge/runtimes.ts).
   */
  SVC_RUNTIMES_DIR: z.string().optional(),
  /**
   * The GitHub forge (services/forge/github/): projects whose origin remote is a repository on
   * SVC_GITHUB_WEB_URL use it with their tenant's token (set by a tenant admin, stored encrypted:
   * services/autonomous/tenant-settings.ts). The API URL goes through the egress policy.
   * SVC_GITHUB_TOKEN is a single-tenant fallback only: it serves the one tenant named by
   * SVC_GITHUB_TOKEN_TENANT_ID (when that tenant has no token of its own) and no other.
   */
  SVC_GITHUB_API_URL: z.url({ protocol: /^https?$/ }).default('https://api.github.com'),
  SVC_GITHUB_WEB_URL: z.url({ protocol: /^https?$/ }).default('https://github.com'),
  SVC_GITHUB_TOKEN: z.string().min(1).optional(),
  SVC_GITHUB_TOKEN_TENANT_ID: z.coerce.number().int().positive().optional(),
  /**
   * The dedicated non-root account the autonomous agent's CLI runs as (spec document 2, "Execution
   * isolation rules"; created by `npm run agent-account:install`).
   */
  SVC_AUTONOMOUS_AGENT_USER: z
    .string()
    .regex(/^[a-z_][a-z0-9_-]{0,31}$/)
    .default('svc-agent'),
  /**
   * Execution isolation of the agent: `required` (refuse to run a step without the account), `auto`
   * (isolate when the service runs as root and the account exists; said once at start), `off`.
   */
  SVC_AUTONOMOUS_ISOLATION: z.enum(['required', 'auto', 'off']).default('auto'),
  /**
   * The sandbox (agent/sandbox/) around every process the service starts for a user: the autonomous
   * runner's CLIs and the local forge's CI and pre-commit hooks. `on`: work that cannot be sandboxed
   * (no bubblewrap, user namespaces off) is refused with the reason; `off`: the operator accepts running
   * it unconfined, and every such run logs a warning. docs/operators/security.md "Security model".
   */
  SVC_SANDBOX: z.enum(['on', 'off']).default('on'),
});

const bool = z.preprocess(
  (v) => (typeof v === 'string' ? ['1', 'true', 'yes', 'on'].includes(v.trim().toLowerCase()) : v),
  z.boolean(),
);
const list = z.preprocess(
  (v) =>
    typeof v === 'string'
      ? v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : v,
  z.array(z.string().min(1)),
);
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const price = z.coerce.number().min(0).max(100_000);
/** A JSON object given as a string (an environment value); anything else is left to the schema. */
const jsonObject = (v: unknown) => {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
};

const chatPlatformSection = z
  .object({
    app_key: z.string().optional(),
    app_secret: z.string().optional(),
    org_sync_enabled: bool.default(false),
    org_sync_tenant_id: int(1, 2 ** 31 - 1).default(1),
    org_sync_interval_minutes: int(1, 10_080).default(60),
    org_sync_root_dept_id: z.string().optional(),
    /**
     * The platform's open-API base URL (org sync). Unset: the real platform's (chatplat_a
     * https://oapi.dingtalk.com, chatplat_b https://open.feishu.cn; services/orgsync/*.ts).
     */
    api_base_url: z.url({ protocol: /^https?$/ }).optional(),
  })
  .strict();

/** The nested sections; each key is documented in config/settings-docs.ts (the settings reference). */
const sectionSchemas = {
  /** Outbound calls to URLs that users control (tenant-written provider keys today). */
  egress: z
    .object({
      /** Host names (or literal addresses) exempt from the private/loopback/metadata refusal. */
      allow_hosts: list.default([]),
    })
    .strict(),
  remote: z
    .object({
      /** Registration tokens expire this many hours after they are generated. */
      registration_token_ttl_hours: z.coerce.number().positive().max(8760).default(24),
      /** Proxy-token lifetimes per session type, in minutes (spec: 4 h general, 15 min HA pool). */
      proxy_token_ttl_general_minutes: int(1, 10_080).default(240),
      proxy_token_ttl_ha_pool_minutes: int(1, 10_080).default(15),
      /**
       * Bounds of one self-declared usage report (one CLI turn: about a context window of tokens; a fifth
       * of the default tenant daily limit), and how many reports a session may send a minute. What
       * counts is clipped to the quota left anyway (api/routes/remote/usage-report.ts).
       */
      usage_report_max_tokens: int(1, 1_000_000_000).default(200_000),
      usage_report_max_requests: int(1, 1_000_000).default(100),
      usage_reports_per_minute: int(1, 10_000).default(60),
      /**
       * Who may open a session's terminal (a shell in the session's sandbox on its machine):
       * `owner_and_admins` (the session's owner, machine admins, system admins), `admins` (machine
       * and system admins only), `off` (nobody).
       */
      terminal_access: z.enum(['owner_and_admins', 'admins', 'off']).default('owner_and_admins'),
    })
    .strict(),
  chatplat_a: chatPlatformSection,
  chatplat_b: chatPlatformSection,
  alerts: z
    .object({
      chatplat_a_webhook_secret: z.string().optional(),
    })
    .strict(),
  autonomous: z
    .object({
      /**
       * Workflows running at once, all users (spec "Limits": 10; re-read every scheduling cycle).
       * Unset: `max_concurrent_workflows` if given, else 10 (domain/autonomous/limits.ts).
       */
      agent_max_concurrent_workflows: int(1, 1000).optional(),
      /** Deprecated alias of `agent_max_concurrent_workflows` (its old default 4 was wrong). */
      max_concurrent_workflows: int(1, 1000).optional(),
      default_cli_tool: z.string().default('cli_beta'),
      /** Post-merge acceptance verification (spec "Limits": default true). */
      acceptance_verification_enabled: bool.default(true),
      /** Planning timeout in seconds (spec "Limits": 1800), extendable per workflow. */
      planning_timeout_seconds: int(60, 7 * 86_400).default(1800),
      /** Automatic CI repair attempts before the workflow fails (spec "Limits": 5). */
      ci_repair_attempts: int(0, 100).default(5),
      /**
       * Retry timing of autonomous error classes (spec "Errors" 4, "Limits"; domain/autonomous/errors.ts):
       * the fixed delay of short in-phase retries (transient network / Git, runner failures, verifier
       * infrastructure failures), the first delay of the exponential backoff of transient API errors and
       * its total window (spec: 1800 s), in seconds (fractions allowed). Tests shorten them; production
       * keeps the defaults.
       */
      transient_retry_delay_seconds: z.coerce.number().min(0.1).max(3600).default(5),
      api_backoff_initial_seconds: z.coerce.number().min(0.1).max(3600).default(10),
      transient_api_retry_window_seconds: z.coerce.number().min(0.1).max(86_400).default(1800),
      /**
       * First delay (seconds, fractions allowed) of the retries of a workflow's workspace preparation
       * (Temporal activity retries: 5 attempts, the delay doubling up to 30 s; a Git ref lock held by
       * another process is the usual cause). Tests shorten it; production keeps the default.
       */
      preparation_retry_initial_seconds: z.coerce.number().min(0.1).max(600).default(2),
      /**
       * Seconds between two reads of a failed CI check's log while it holds no usable evidence
       * (spec "Limits": 6 CI log diagnostics polls, then fail with a permission hint; fractions
       * allowed). Tests shorten it.
       */
      ci_log_poll_seconds: z.coerce.number().min(0.1).max(3600).default(30),
      /**
       * Milliseconds between two reads of what the model proxy wrote for a finished CLI step (its
       * usage rows, re-read until two reads agree; a failed attempt's provider-error fact, read up to 8
       * times). Tests shorten it; production keeps the default.
       */
      runner_settle_poll_ms: int(10, 5000).default(250),
      /**
       * Milliseconds between two reads of a running CLI step's workflow status by the runner (a pause
       * freezes the CLI, a stop ends it, at the next read) and between two of its activity heartbeats (a
       * cancelled step learns of its cancellation at a heartbeat: SVC_TEMPORAL_HEARTBEAT_THROTTLE_MS).
       * Tests shorten them; production keeps the defaults.
       */
      runner_poll_ms: int(50, 60_000).default(1000),
      runner_heartbeat_ms: int(50, 10_000).default(3000),
      /**
       * Seconds without a heartbeat after which Temporal takes a CLI step's or a CI run's activity for
       * lost (its worker died) and runs it again on another worker. Unset: 15 s for a CLI step, 20 s for
       * a CI run. Tests that kill a worker shorten it; production keeps the defaults.
       */
      heartbeat_timeout_seconds: int(2, 600).optional(),
      /** Per-task resource limits (cgroup): on | auto (when the host supports it) | off. */
      agent_task_cgroup_enabled: z.enum(['on', 'auto', 'off']).default('auto'),
      /**
       * Base URL of this API as the autonomous runner's CLIs reach it (the model proxy is
       * `<it>/api/remote/llm-proxy`). Unset: SVC_PUBLIC_URL, else http://HOST:PORT.
       */
      proxy_base_url: z.url({ protocol: /^https?$/ }).optional(),
      /**
       * Executable per CLI tool id for the autonomous runner (`{"cli_beta": "/opt/claude/bin/claude"}`;
       * from the environment as a JSON string). Unset tools run the adapter's own name from PATH.
       */
      cli_paths: z.preprocess(jsonObject, z.record(z.string().min(1).max(64), z.string().min(1))).default({}),
    })
    .strict(),
  agent: z
    .object({
      /** A machine is offline after this many seconds without a heartbeat or poll (spec: 180). */
      offline_after_seconds: int(10, 86_400).default(180),
    })
    .strict(),
  /** Server-side transcript collection (POST /api/fetch/data; services/collectors/). */
  collectors: z
    .object({
      /** Claude Code transcript folders (`<dir>/<project>/<session>.jsonl`). */
      claude_code_dirs: list.default(() => [path.join(os.homedir(), '.claude', 'projects')]),
      /** Codex CLI transcript folders (`<dir>/YYYY/MM/DD/rollout-*.jsonl`). */
      codex_dirs: list.default(() => [path.join(os.homedir(), '.codex', 'sessions')]),
      /** host_name of the collected messages. */
      host_name: z
        .string()
        .min(1)
        .max(255)
        .default(() => os.hostname()),
      /** sender_name of the collected messages: the OS account, resolved through user_tool_accounts. */
      sender_name: z
        .string()
        .min(1)
        .max(255)
        .default(() => os.userInfo().username),
      /** A file's unfinished tail (a response still streaming) is stored once the file is this old. */
      settle_seconds: int(0, 86_400).default(300),
      /** The background fetch scheduler (services/collectors/schedule.ts): a collection run on a schedule. */
      schedule_enabled: bool.default(false),
      /** Minutes between two scheduled collection runs. */
      schedule_interval_minutes: int(1, 1440).default(15),
    })
    .strict(),
  /** Quota enforcement (spec document 2, rule 6; services/quota-enforcement.ts). */
  quota: z
    .object({
      /** Multi-tenant mode: turns the quota enforcement schedule on (SVC_QUOTA__MULTI_TENANT). */
      multi_tenant: bool.default(false),
      /** Seconds between two enforcement ticks (spec: every 60 s). */
      enforcement_interval_seconds: int(1, 86_400).default(60),
    })
    .strict(),
  /**
   * Cost estimates of the ROI endpoints (domain/roi/prices.ts): USD per million tokens. `models` is
   * merged over the built-in list-price table, keyed by model-name prefix (`{"my-model": {"input": 1,
   * "output": 2}}`; from the environment as a JSON string); unknown models use the default price.
   */
  pricing: z
    .object({
      models: z
        .preprocess(
          jsonObject,
          z.record(z.string().min(1).max(100), z.object({ input: price, output: price }).strict()),
        )
        .default({}),
      default_input_per_million: price.default(3),
      default_output_per_million: price.default(15),
    })
    .strict(),
  /** The local forge of autonomous workflows (services/forge/local-forge.ts). */
  forge: z
    .object({
      /** Wall clock of one CI run (the repository's declared test command), in seconds. */
      ci_timeout_seconds: int(1, 86_400).default(600),
      /** PR diff text returned by the forge is cut at this many bytes (stats stay complete). */
      diff_max_bytes: int(1024, 64 * 1024 * 1024).default(1024 * 1024),
    })
    .strict(),
} as const;

type SectionName = keyof typeof sectionSchemas;
export const SECTION_NAMES = Object.keys(sectionSchemas) as SectionName[];
type Sections = { [K in SectionName]: z.infer<(typeof sectionSchemas)[K]> };

export type Settings = z.infer<typeof flatSchema> &
  Sections & {
    dataDir: string;
    workspaceDir: string;
    production: boolean;
    dialect: 'sqlite' | 'postgres';
    sqlitePath: string;
    /** Where each value came from, for the startup banner (`section.key` for nested ones). */
    sources: Record<string, 'env' | 'file' | 'default'>;
  };

export const SETTING_NAMES = Object.keys(flatSchema.shape) as (keyof z.infer<typeof flatSchema>)[];

/** Every key of every nested section, as `section.key`. */
export const SECTION_SETTING_NAMES: string[] = SECTION_NAMES.flatMap((section) =>
  Object.keys(sectionSchemas[section].shape).map((key) => `${section}.${key}`),
);

/** The environment variable that overrides `section.key`. */
export const sectionEnvName = (section: string, key: string) =>
  `SVC_${section.toUpperCase()}__${key.toUpperCase()}`;

const CONFIG_FILE_NAMES = ['config.json', 'config.yaml', 'config.yml'];

/** The config file of the data directory that is read (the first that exists), or null. */
export function configFilePath(dataDir: string): string | null {
  for (const name of CONFIG_FILE_NAMES) {
    const file = path.join(dataDir, name);
    if (existsSync(file)) return file;
  }
  return null;
}

function readConfigFile(dataDir: string): Record<string, unknown> {
  for (const name of CONFIG_FILE_NAMES) {
    const file = path.join(dataDir, name);
    if (!existsSync(file)) continue;
    const raw = readFileSync(file, 'utf8');
    let parsed: unknown;
    try {
      parsed = name.endsWith('.json') ? JSON.parse(raw) : YAML.parse(raw);
    } catch (e) {
      throw new SettingsError(`Cannot read ${file}: ${(e as Error).message}`);
    }
    if (parsed && typeof parsed === 'object') return parsed as Record<string, unknown>;
  }
  return {};
}

export class SettingsError extends Error {}

function fail(where: string, issue: z.core.$ZodIssue): never {
  const at = [where, ...issue.path.map(String)].filter(Boolean).join('.');
  throw new SettingsError(`Invalid setting ${at}: ${issue.message}`);
}

function loadSection(
  name: SectionName,
  file: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
  sources: Settings['sources'],
) {
  const fromFile = file[name] ?? file[name.toUpperCase()];
  if (
    fromFile !== undefined &&
    (typeof fromFile !== 'object' || fromFile === null || Array.isArray(fromFile))
  )
    throw new SettingsError(`Invalid setting ${name}: expected an object of keys`);
  const merged: Record<string, unknown> = {};
  for (const [k, v] of Object.entries((fromFile as Record<string, unknown>) ?? {}))
    merged[k.toLowerCase()] = v;
  const shape = (sectionSchemas[name] as z.ZodObject).shape;
  for (const key of Object.keys(shape)) {
    const envValue = env[sectionEnvName(name, key)];
    if (envValue !== undefined && envValue !== '') {
      merged[key] = envValue;
      sources[`${name}.${key}`] = 'env';
    } else sources[`${name}.${key}`] = merged[key] !== undefined ? 'file' : 'default';
  }
  const parsed = sectionSchemas[name].safeParse(merged);
  if (!parsed.success) fail(name, parsed.error.issues[0]!);
  return parsed.data;
}

/**
 * Section `name` as the data directory's config file gives it now, defaults for what it leaves out
 * and no environment override (the caller keeps those: `sources`). For the settings re-read while the
 * service runs (config/live-settings.ts). Throws SettingsError on an unreadable or invalid file.
 */
export function readFileSection<K extends SectionName>(name: K, dataDir: string): Sections[K] {
  return loadSection(name, readConfigFile(dataDir), {}, {}) as Sections[K];
}

export function loadSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const dataDir = path.resolve(env.SVC_DATA_DIR || './data');
  const file = readConfigFile(dataDir);
  const flatFile: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(file))
    if (typeof v !== 'object' || v === null) flatFile[k.toUpperCase()] = v;
  const merged: Record<string, unknown> = {};
  const sources: Settings['sources'] = {};
  for (const name of SETTING_NAMES) {
    if (env[name] !== undefined && env[name] !== '') {
      merged[name] = env[name];
      sources[name] = 'env';
    } else if (flatFile[name] !== undefined) {
      merged[name] = String(flatFile[name]);
      sources[name] = 'file';
    } else sources[name] = 'default';
  }
  const parsed = flatSchema.safeParse(merged);
  if (!parsed.success) fail('', parsed.error.issues[0]!);
  const sections = Object.fromEntries(
    SECTION_NAMES.map((name) => [name, loadSection(name, file, env, sources)]),
  ) as Sections;
  const s = parsed.data;
  const production = s.NODE_ENV === 'production';
  if (production) {
    const missing = (['SVC_ENCRYPTION_KEY', 'SECRET_KEY'] as const).filter((k) => !s[k]);
    if (missing.length)
      throw new SettingsError(
        `Refusing to start in production without ${missing.join(' and ')}. Set ${missing.length > 1 ? 'them' : 'it'} in the environment or in ${dataDir}/config.json.`,
      );
  }
  const dialect = s.DATABASE_URL && /^postgres(ql)?:\/\//.test(s.DATABASE_URL) ? 'postgres' : 'sqlite';
  const sqlitePath =
    s.DATABASE_URL && dialect === 'sqlite'
      ? s.DATABASE_URL.replace(/^sqlite:(\/\/)?/, '')
      : path.join(dataDir, 'svc.sqlite');
  const workspaceDir = path.resolve(s.SVC_WORKSPACE_DIR || path.join(dataDir, 'workspaces'));
  return { ...s, ...sections, dataDir, workspaceDir, production, dialect, sqlitePath, sources };
}
