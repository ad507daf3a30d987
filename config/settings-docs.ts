// The settings reference (docs/operators/settings.md): one row per setting, in the order readers meet
// them. `npm run docs:settings` writes the tables into that page, and test/unit/settings-docs.test.ts
// fails when a setting of config/settings.ts has no row, a row names no setting, or the page differs
// from what this file renders. Cells are Markdown.
import { SECTION_SETTING_NAMES, SETTING_NAMES } from './settings.ts';

export interface SettingDoc {
  /** The setting(s) the row documents, each in backticks: `NAME`, `section.key` or `section.*`. */
  setting: string;
  default: string;
  meaning: string;
}

export const FLAT_SETTING_DOCS: readonly SettingDoc[] = [
  {
    setting: '`PORT`',
    default: '`19888`',
    meaning: 'HTTP port (0 picks a free one)',
  },
  {
    setting: '`HOST`',
    default: '`127.0.0.1`',
    meaning: 'Interface the API binds to',
  },
  {
    setting: '`SVC_DATA_DIR`',
    default: '`./data`',
    meaning: 'SQLite file, Temporal dev-server file, caches, config file',
  },
  {
    setting: '`DATABASE_URL`',
    default: 'SQLite in the data dir',
    meaning: '`postgres://…` selects PostgreSQL',
  },
  {
    setting: '`TEMPORAL_ADDRESS`',
    default: 'embedded server',
    meaning: '`host:port` of an existing Temporal cluster instead of the embedded one',
  },
  {
    setting: '`TEMPORAL_NAMESPACE`',
    default: '`default`',
    meaning: 'Temporal namespace',
  },
  {
    setting: '`TEMPORAL_TASK_QUEUE`',
    default: '`svc`',
    meaning: 'Task queue of the worker',
  },
  {
    setting: '`SVC_TEMPORAL_CONNECT_TIMEOUT_MS`',
    default: '`5000`',
    meaning:
      "How long the API's Temporal client tries to connect before a request that needs Temporal answers 503",
  },
  {
    setting: '`SVC_TEMPORAL_RETRY_BUDGET_MS`',
    default: '`3000`',
    meaning:
      "How long the API's connected Temporal client retries one call while Temporal is unreachable before the request answers 503 with `Retry-After` (the client's own default was about 20 s)",
  },
  {
    setting: '`SVC_TEMPORAL_STICKY_TIMEOUT_MS`',
    default: '`10000`',
    meaning:
      "How long a workflow task waits for the worker that ran the workflow last (its sticky queue) before any worker takes it: after a worker dies, its workflows' next steps wait this long (the Temporal SDK's default)",
  },
  {
    setting: '`SVC_TEMPORAL_HEARTBEAT_THROTTLE_MS`',
    default: 'unset',
    meaning:
      "The longest the worker holds back an activity heartbeat (unset: the SDK's 80% of the activity's heartbeat timeout); a cancelled activity learns of its cancellation at its next heartbeat",
  },
  {
    setting: '`SVC_USAGE_WRITER_THREAD`',
    default: '`on`',
    meaning:
      'PostgreSQL: write proxied calls\' message rows from a worker thread with its own 2 connections (`off`: on the API\'s thread; see "Model-key vault, proxy and quotas")',
  },
  {
    setting: '`SVC_PROXY_ACCOUNTING`',
    default: '`inline`',
    meaning:
      'SQLite: `thread` writes proxied calls\' message rows from that worker thread too, on its own WAL connection (see "Model-key vault, proxy and quotas")',
  },
  {
    setting:
      '`TEMPORAL_TLS`, `TEMPORAL_TLS_SERVER_CA_CERT_PATH`, `TEMPORAL_TLS_SERVER_NAME`, `TEMPORAL_TLS_CLIENT_CERT_PATH`, `TEMPORAL_TLS_CLIENT_KEY_PATH`, `TEMPORAL_API_KEY`',
    default: 'plain gRPC',
    meaning:
      'TLS, mTLS and API key of the connection to the cluster at `TEMPORAL_ADDRESS`, used by the API and the workers alike (see "Production deployment")',
  },
  {
    setting: '`TEMPORAL_CLI_PATH`',
    default: 'search (above)',
    meaning: 'Path of the `temporal` CLI',
  },
  {
    setting: '`SVC_TEMPORAL_DEV_PORT`, `SVC_TEMPORAL_UI_PORT`',
    default: 'from `temporal-dev.yaml`',
    meaning: "Override the embedded server's ports (0 = free ports)",
  },
  {
    setting: '`SVC_ENCRYPTION_KEY`',
    default: 'random dev key',
    meaning:
      'Key for secrets at rest (AES-128-CBC + HMAC-SHA256, Fernet format; the key is SHA-256 of this value). Required in production; outside production a missing key is generated once and kept in `<data dir>/dev-secrets.json` (mode 0600)',
  },
  {
    setting: '`SECRET_KEY`',
    default: 'random dev key',
    meaning:
      'Web session and proxy-token signing secret. Required in production; outside production generated like the above',
  },
  {
    setting: '`SVC_UPLOAD_AUTH_KEY`',
    default: 'unset',
    meaning:
      'Shared value of the `X-Upload-Auth` header for upload endpoints (trusted collectors: writes as any user; personal upload tokens need no setting)',
  },
  {
    setting: '`SVC_UPLOAD_SHARED_KEY`',
    default: '`on`',
    meaning: '`off` refuses the shared upload key; only personal upload tokens are accepted',
  },
  {
    setting: '`SVC_DB_POOL_MAX`',
    default: '`10`',
    meaning:
      'PostgreSQL: the most connections one process (API instance, worker, `npm start`) opens (1-1000); see "Production deployment"',
  },
  {
    setting: '`SVC_ADMIN_USERNAME`',
    default: '`admin`',
    meaning: 'Administrator created on an empty database (by `npm start` or `npm run api`)',
  },
  {
    setting: '`SVC_ADMIN_PASSWORD`',
    default: 'generated',
    meaning: 'Its password; when unset one is generated, printed once, and must be changed',
  },
  {
    setting: '`SVC_SESSION_LIFETIME_HOURS`',
    default: '`24`',
    meaning: 'Login session lifetime',
  },
  {
    setting: '`SVC_AUTH_SESSION_CACHE_SIZE`',
    default: '`10000`',
    meaning: 'Sessions each API instance keeps resolved in memory (LRU); `0` turns the cache off',
  },
  {
    setting: '`SVC_AUTH_SESSION_CACHE_TTL_MS`',
    default: '`30000`',
    meaning: 'Longest a cached session is served without a re-read (the bound if an invalidation is lost)',
  },
  {
    setting: '`SVC_TRUST_PROXY`',
    default: '`loopback`',
    meaning: "Express `trust proxy`: which proxies' `X-Forwarded-*` headers are believed",
  },
  {
    setting: '`SVC_PUBLIC_URL`',
    default: "the request's (checked) Host",
    meaning: 'URL agents use to reach the server; its host name is one the API answers for',
  },
  {
    setting: '`SVC_ALLOWED_HOSTS`',
    default: 'empty',
    meaning:
      "Extra `Host` names the API answers for (comma list), besides `SVC_PUBLIC_URL`'s, `HOST` and loopback names; any other Host gets 421",
  },
  {
    setting: '`SVC_INSTANCE_URL`',
    default: 'the listen URL (`http://HOST:PORT`)',
    meaning:
      "This instance's own address as browsers and agents reach it (at most 100 characters): the terminal relay registers it as the owner of the terminals it holds, browsers on another instance are sent there (close code 3010) and agents open the terminal channel there. Set it on every instance of a scale-out deployment",
  },
  {
    setting: '`SVC_WEB_CONNECT_ORIGINS`',
    default: 'empty',
    meaning:
      "The other instances' addresses (comma-separated http(s) URLs, their `SVC_INSTANCE_URL`): added, with their `ws(s)://` origins, to the web app's CSP `connect-src`, so a browser terminal closed with 3010 can reconnect to its owner, and accepted as an Origin by this instance's terminal relay (their pages reconnect here). List every instance on every instance. Without it the page can reach only the instance that served it",
  },
  {
    setting: '`SVC_WORKSPACE_DIR`',
    default: '`<data dir>/workspaces`',
    meaning: 'Work files (checked by `/readyz`: writable, at least 64 MiB free)',
  },
  {
    setting: '`SVC_SESSION_STATS_REFRESH_MINUTES`',
    default: '`5`',
    meaning:
      "Interval of the Temporal schedule that refreshes PostgreSQL's `session_stats` materialized view",
  },
  {
    setting: '`SVC_AUTONOMOUS_PROJECT_ROOTS`',
    default: '`<data dir>/projects`',
    meaning:
      "Directories autonomous workflows may work in (a path list separated like `PATH`); each tenant has its own folder `<root>/tenant-<id>` in every root, and a `project_path` must resolve (symlinks followed) to a Git repository strictly inside the caller's tenant's folder: 400 outside the roots, 403 in another tenant's folder",
  },
  {
    setting: '`AUTONOMOUS_TASK_TIMEOUT`',
    default: '`3600`',
    meaning: 'Running time of one autonomous agent run, in seconds',
  },
  {
    setting: '`SVC_AUTONOMOUS_STREAM_KEEPALIVE_MS`',
    default: '`30000`',
    meaning: 'Interval of the visible `keepalive` event on `GET /api/autonomous/workflows/:id/events/stream`',
  },
  {
    setting: '`AUTONOMOUS_MAX_CHANGED_FILES`',
    default: '`60`',
    meaning: 'Files one automatic change may touch',
  },
  {
    setting: '`SVC_RUNTIMES_DIR`',
    default: 'unset',
    meaning:
      "Installed runtimes for repository-declared versions (`.nvmrc`, `.tool-versions`, `engines.node`): Node as `<dir>/node/<version>/bin/node`; CI and pre-commit hooks use the declared one when installed, else the service's Node with a note in the CI log",
  },
  {
    setting: '`LOG_LEVEL`',
    default: '`info`',
    meaning: '`fatal` … `trace`, `silent`',
  },
  {
    setting: '`NODE_ENV`',
    default: '`development`',
    meaning:
      '`production` refuses to start without `SVC_ENCRYPTION_KEY` and `SECRET_KEY`, never runs DDL at startup, and refuses a schema outside the compatibility window',
  },
  {
    setting: '`SVC_PROXY_CONTEXT_CACHE_SIZE`, `SVC_PROXY_CONTEXT_CACHE_TTL_MS`',
    default: '`10000`, `1000`',
    meaning:
      'The model proxy\'s per-instance cache of call contexts (token record, session, user, tenant, key): entries (`0` = off) and the longest one is served without a re-read (revocation is pushed; see "Model-key vault, proxy and quotas")',
  },
  {
    setting: '`SVC_QUOTA_LEASE_REQUESTS`, `SVC_QUOTA_LEASE_TOKENS`',
    default: '`64`, `50000`',
    meaning:
      'Model proxy: requests and tokens one instance reserves per quota lease (`0` requests: leases off), so its calls take from the lease without a statement; the bound on overshoot is under *Quota leases* in [Model keys, the model proxy and quotas](../administrators/model-keys-proxy-and-quotas.md)',
  },
  {
    setting: '`SVC_AUTONOMOUS_AGENT_USER`',
    default: '`svc-agent`',
    meaning:
      "The dedicated non-root account the autonomous runner's CLIs run as (created by `npm run agent-account:install`)",
  },
  {
    setting: '`SVC_AUTONOMOUS_ISOLATION`',
    default: '`auto`',
    meaning:
      'Execution isolation of the autonomous agent: `required` (refuse a step without the account), `auto` (isolate when running as root and the account exists), `off`',
  },
];

export const SECTION_SETTING_DOCS: readonly SettingDoc[] = [
  {
    setting: '`egress.allow_hosts`',
    default: '`[]`',
    meaning: 'Hosts exempt from the egress policy for tenant-written provider keys (below)',
  },
  {
    setting: '`remote.registration_token_ttl_hours`',
    default: '`24`',
    meaning: 'Registration tokens expire this long after they are generated',
  },
  {
    setting: '`remote.proxy_token_ttl_general_minutes`',
    default: '`240`',
    meaning: 'Proxy-token lifetime for general sessions (spec: 4 h)',
  },
  {
    setting: '`remote.proxy_token_ttl_ha_pool_minutes`',
    default: '`15`',
    meaning: 'Proxy-token lifetime for high-availability pool sessions',
  },
  {
    setting: '`remote.usage_report_max_tokens`',
    default: '`200000`',
    meaning: 'Most tokens one agent usage report may declare',
  },
  {
    setting: '`remote.usage_report_max_requests`',
    default: '`100`',
    meaning: 'Most requests one agent usage report may declare',
  },
  {
    setting: '`remote.usage_reports_per_minute`',
    default: '`60`',
    meaning: 'Usage reports one session may send per minute (429 beyond)',
  },
  {
    setting: '`remote.terminal_access`',
    default: '`owner_and_admins`',
    meaning:
      'Who may open a session\'s terminal: `owner_and_admins` (the owner, machine admins, system admins), `admins` (machine and system admins), `off` (nobody); refusals close with 1008 and 403 ("Security model")',
  },
  {
    setting: '`SVC_SANDBOX`',
    default: '`on`',
    meaning:
      '`on`: autonomous CLIs, CI and pre-commit hooks run in the sandbox and are refused when it cannot be had; `off`: they run unconfined, with a warning at every run ("Security model")',
  },
  {
    setting: '`SVC_BWRAP_PATH`',
    default: '`bwrap` on `PATH`',
    meaning: 'Path of bubblewrap, for the service and the agent, when it is not on `PATH`',
  },
  {
    setting: '`agent.offline_after_seconds`',
    default: '`180`',
    meaning: 'A machine is offline after this long without a heartbeat or poll',
  },
  {
    setting: '`collectors.claude_code_dirs`',
    default: '`~/.claude/projects`',
    meaning:
      'Claude Code transcript folders read by collection runs (`SVC_COLLECTORS__CLAUDE_CODE_DIRS`, comma list)',
  },
  {
    setting: '`collectors.codex_dirs`',
    default: '`~/.codex/sessions`',
    meaning: 'Codex CLI transcript folders (`SVC_COLLECTORS__CODEX_DIRS`)',
  },
  {
    setting: '`collectors.host_name`, `collectors.sender_name`',
    default: '`os.hostname()`, the OS user',
    meaning:
      '`host_name` and `sender_name` of collected messages (the sender is resolved through `user_tool_accounts`)',
  },
  {
    setting: '`collectors.settle_seconds`',
    default: '`300`',
    meaning: "A transcript's unfinished last response is stored once the file has been idle this long",
  },
  {
    setting: '`collectors.schedule_enabled`',
    default: '`false`',
    meaning:
      'The background fetch scheduler: a collection run on a Temporal Schedule (`SVC_COLLECTORS__SCHEDULE_ENABLED=true`); off, the schedule is deleted at worker start',
  },
  {
    setting: '`collectors.schedule_interval_minutes`',
    default: '`15`',
    meaning: 'Minutes between two scheduled collection runs (1-1440)',
  },
  {
    setting: '`quota.multi_tenant`',
    default: '`false`',
    meaning: 'Multi-tenant mode: turns the quota enforcement schedule on (`SVC_QUOTA__MULTI_TENANT=true`)',
  },
  {
    setting: '`quota.enforcement_interval_seconds`',
    default: '`60`',
    meaning: 'Interval of the quota enforcement schedule (spec: 60 s)',
  },
  {
    setting: '`pricing.models`, `pricing.default_input_per_million`, `pricing.default_output_per_million`',
    default: 'built-in list prices; `3`, `15`',
    meaning:
      'Model prices in USD per million input/output tokens for ROI cost estimates (`SVC_PRICING__MODELS` takes JSON; see "Return on investment")',
  },
  {
    setting: '`SVC_ALERT_KEEPALIVE_MS`',
    default: '`15000`',
    meaning: 'Interval of the keepalive comment on `GET /api/alerts/stream`',
  },
  {
    setting: '`chatplat_a.*`, `chatplat_b.*`',
    default: 'sync off',
    meaning:
      '`app_key`, `app_secret` (env `SVC_CHATPLAT_A__APP_SECRET`), `org_sync_enabled`, `org_sync_tenant_id` (1), `org_sync_interval_minutes` (60), `org_sync_root_dept_id` (platform root), `api_base_url` (the real platform\'s; see "Organization sync")',
  },
  {
    setting: '`alerts.chatplat_a_webhook_secret`',
    default: 'unset',
    meaning:
      'Global signing secret of alert robot webhooks (second in the resolution order; see "Alert webhooks")',
  },
  {
    setting:
      '`autonomous.agent_max_concurrent_workflows`, `autonomous.max_concurrent_workflows` (deprecated alias)',
    default: '`10`',
    meaning:
      'Autonomous workflows running at once, all users (spec "Limits"; re-read every scheduling cycle). `autonomous.max_concurrent_workflows` is a deprecated alias, used only when this key is unset',
  },
  {
    setting: '`autonomous.default_cli_tool`',
    default: '`cli_beta`',
    meaning: 'CLI tool of a workflow created without `cli_tool`',
  },
  {
    setting: '`autonomous.acceptance_verification_enabled`',
    default: '`true`',
    meaning: 'Post-merge acceptance verification; off: a workflow completes right after its merge',
  },
  {
    setting: '`autonomous.planning_timeout_seconds`',
    default: '`1800`',
    meaning: 'Planning timeout (extendable per workflow)',
  },
  {
    setting: '`autonomous.ci_repair_attempts`',
    default: '`5`',
    meaning: 'Automatic CI repair attempts before the workflow fails',
  },
  {
    setting:
      '`autonomous.transient_retry_delay_seconds`, `autonomous.api_backoff_initial_seconds`, `autonomous.transient_api_retry_window_seconds`, `autonomous.preparation_retry_initial_seconds`',
    default: '`5`, `10`, `1800`, `2`',
    meaning:
      'Retry timing of autonomous steps (seconds, fractions allowed): the fixed delay of short in-phase retries (network, Git, runner failures), the first delay and the total window of the backoff on transient API errors (spec: 1800 s), and the first delay of workspace-preparation retries (see "Autonomous error classes")',
  },
  {
    setting: '`autonomous.ci_log_poll_seconds`',
    default: '`30`',
    meaning:
      "Seconds (fractions allowed) between two reads of a failed CI check's log while it holds no usable evidence (6 reads, then the workflow fails with a permission hint)",
  },
  {
    setting: '`autonomous.runner_settle_poll_ms`',
    default: '`250`',
    meaning:
      "Milliseconds between two reads of what the model proxy wrote for a finished autonomous CLI step: its usage rows (re-read until two reads agree, at most 3 s) and a failed attempt's provider-error fact (8 reads)",
  },
  {
    setting: '`autonomous.runner_poll_ms`, `autonomous.runner_heartbeat_ms`',
    default: '`1000`, `3000`',
    meaning:
      "Milliseconds between two reads of a running autonomous CLI step's workflow status (a pause freezes the CLI, a stop ends it) and between two of the step's activity heartbeats (a cancelled step learns of it at a heartbeat)",
  },
  {
    setting: '`autonomous.heartbeat_timeout_seconds`',
    default: 'unset',
    meaning:
      "Seconds without a heartbeat after which an autonomous CLI step's or CI run's activity is taken for lost (its worker died) and run again (unset: 15 s for a CLI step, 20 s for a CI run)",
  },
  {
    setting: '`autonomous.agent_task_cgroup_enabled`',
    default: '`auto`',
    meaning:
      'Per-task resource limits (2 GiB, 512 processes, 2 CPUs, 3600 s): `on`, `auto` (when the host supports it), `off`',
  },
  {
    setting: '`autonomous.proxy_base_url`',
    default: '`SVC_PUBLIC_URL`, else `http://HOST:PORT`',
    meaning:
      "This API's address as the autonomous runner's CLIs reach it (the model proxy is `<it>/api/remote/llm-proxy`)",
  },
  {
    setting: '`autonomous.cli_paths`',
    default: '`{}`',
    meaning:
      'Executable per CLI tool id for the autonomous runner (`{"cli_beta": "/opt/claude/bin/claude"}`; JSON text from the environment); unset tools run the adapter\'s name from `PATH`',
  },
  {
    setting: '`forge.ci_timeout_seconds`, `forge.diff_max_bytes`',
    default: '`600`, `1048576`',
    meaning: 'Local forge: wall clock of one CI run; PR diff text cut at this size (see "Local forge")',
  },
  {
    setting: '`SVC_GITHUB_API_URL`, `SVC_GITHUB_WEB_URL`',
    default: '`https://api.github.com`, `https://github.com`',
    meaning:
      'GitHub forge: projects whose `origin` is a repository on the web URL use GitHub with their tenant\'s token (`PUT /api/tenants/:id/autonomous`; see "GitHub forge")',
  },
  {
    setting: '`SVC_GITHUB_TOKEN`, `SVC_GITHUB_TOKEN_TENANT_ID`',
    default: 'unset',
    meaning:
      'Single-tenant fallback only: the global token serves the one tenant `SVC_GITHUB_TOKEN_TENANT_ID` names (when it has no token of its own), never any other tenant',
  },
];

const table = (header: string, rows: readonly SettingDoc[]) =>
  [
    `| ${header} | Default | Meaning |`,
    '|---|---|---|',
    ...rows.map((r) => `| ${r.setting} | ${r.default} | ${r.meaning} |`),
  ].join('\n');

/**
 * The settings page with its two tables (between `<!-- settings-flat ... -->` / `<!-- /settings-flat -->`
 * and the same for `settings-sections`) rendered from the rows above; the prose around them is kept.
 */
export function renderSettingsPage(page: string): string {
  const { flat, sections } = renderSettingsTables();
  return fill(fill(page, 'settings-flat', flat), 'settings-sections', sections);
}

function fill(page: string, name: string, table: string): string {
  const open = page.indexOf(`<!-- ${name}:`);
  const close = page.indexOf(`<!-- /${name} -->`);
  if (open === -1 || close < open)
    throw new Error(`the settings page has no <!-- ${name}: --> ... <!-- /${name} --> markers`);
  const afterOpen = page.indexOf('\n', open) + 1;
  return `${page.slice(0, afterOpen)}${table}\n${page.slice(close)}`;
}

/** The two tables as they appear in docs/operators/settings.md. */
export function renderSettingsTables(): { flat: string; sections: string } {
  return { flat: table('Setting', FLAT_SETTING_DOCS), sections: table('Section.key', SECTION_SETTING_DOCS) };
}

/** The names a row documents (`section.*` stands for every key of the section). */
export const namesOf = (row: SettingDoc): string[] =>
  [...row.setting.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

/**
 * Variables read from the environment outside config/settings.ts: the sandbox launcher is shared with
 * the agent, which ships alone and cannot import the settings module.
 */
const ENVIRONMENT_ONLY = ['SVC_BWRAP_PATH'];

/** Settings without a row, and names in rows that are no setting (both empty when the docs are whole). */
export function settingsDocsGaps(): { undocumented: string[]; unknown: string[] } {
  const real = new Set<string>([...SETTING_NAMES, ...SECTION_SETTING_NAMES, ...ENVIRONMENT_ONLY]);
  const sections = new Set(SECTION_SETTING_NAMES.map((n) => n.slice(0, n.indexOf('.'))));
  const documented = new Set<string>();
  const unknown: string[] = [];
  for (const row of [...FLAT_SETTING_DOCS, ...SECTION_SETTING_DOCS]) {
    for (const name of namesOf(row)) {
      if (name.endsWith('.*') && sections.has(name.slice(0, -2))) {
        for (const n of real) if (n.startsWith(name.slice(0, -1))) documented.add(n);
      } else if (real.has(name)) documented.add(name);
      else unknown.push(name);
    }
  }
  return { undocumented: [...real].filter((n) => !documented.has(n)), unknown };
}
