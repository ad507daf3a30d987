// One real AI CLI run the way a developer runs it on a laptop (issue 29, item 3): a fresh temp HOME,
// no agent, the CLI pointed at a base URL with a key through the variables and config files a user
// sets (the same ones the agent writes per session: agent/adapters.ts, agent/cli-home.ts,
// agent/codex-home.ts, reused here), one prompt, and, when asked, its OpenTelemetry exported over
// OTLP/HTTP to an endpoint with `Authorization: Bearer <key>`:
//   cli_beta  (Claude Code)  CLAUDE_CODE_ENABLE_TELEMETRY=1 + the standard OTEL_* variables;
//   cli_gamma (Codex)        an `[otel]` table in $CODEX_HOME/config.toml (exporter and
//                            metrics_exporter `otlp-http`, full signal URLs, headers);
//   cli_delta (Gemini CLI)   `telemetry` in settings.json (otlpEndpoint, otlpProtocol "http"); the
//   cli_alpha (Qwen Code)    header comes from OTEL_EXPORTER_OTLP_HEADERS (their OTel SDK reads it).
// startOtlpCapture is a real HTTP server that keeps every OTLP body as sent (test/fixtures/otlp/).
import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { buildCliEnv, getAdapter, type LineInfo } from '../../agent/adapters.ts';
import { jsonLinesOf } from './real-cli-session.ts';

export type LaptopProtocol = 'http/protobuf' | 'http/json';

export interface LaptopOtlp {
  /** Base URL of the OTLP/HTTP receiver; the CLIs post to `<endpoint>/v1/logs` and `/v1/metrics`. */
  endpoint: string;
  /** Sent as `Authorization: Bearer <token>` on every export. */
  token: string;
  protocol?: LaptopProtocol;
}

export interface LaptopRunOptions {
  /** Model base URL as the user sets it (Anthropic/Gemini: without /v1; OpenAI-style: as the client wants). */
  baseUrl: string;
  /** The credential (a gateway key, or anything the mock accepts). */
  key: string;
  model: string;
  prompt: string;
  otlp?: LaptopOtlp;
  /** Arguments after the adapter's (e.g. Claude Code's `--permission-mode acceptEdits`). */
  extraArgs?: string[];
  /**
   * Ends the CLI (SIGTERM) once its output matches: some CLIs retry a refused call for minutes
   * (Claude Code retries a 401 ten times with backoff); the test needs only the CLI's own error line.
   */
  stopWhen?: RegExp;
  /**
   * Ends the CLI (SIGTERM) once this resolves true (polled): for a CLI that shows nothing of what the
   * test waits for (Qwen Code waits out a 429's Retry-After silently; the proxy's audit row shows it).
   */
  stopWhenTrue?: () => Promise<boolean>;
  /** The project folder (default: a new one in the temp HOME). */
  cwd?: string;
  timeoutMs?: number;
}

export interface LaptopRun {
  code: number | null;
  timedOut: boolean;
  /** Ended by `stopWhen`. */
  stopped: boolean;
  stdout: string;
  stderr: string;
  home: string;
  /** The CLI's last turn, read by its adapter (turnError holds the CLI's own error text). */
  result: LineInfo | undefined;
}

const trimSlash = (u: string) => u.replace(/\/+$/, '');

/** Telemetry short intervals: a one-prompt run exits within seconds, its exporters flush on exit. */
const OTEL_INTERVALS = { OTEL_METRIC_EXPORT_INTERVAL: '1000', OTEL_LOGS_EXPORT_INTERVAL: '500' };

/** The standard OTel SDK variables every Node CLI's exporter reads (headers, and protocol/endpoint). */
function otelEnv(otlp: LaptopOtlp): Record<string, string> {
  return {
    OTEL_EXPORTER_OTLP_PROTOCOL: otlp.protocol ?? 'http/protobuf',
    OTEL_EXPORTER_OTLP_ENDPOINT: trimSlash(otlp.endpoint),
    OTEL_EXPORTER_OTLP_HEADERS: `Authorization=Bearer ${otlp.token}`,
    ...OTEL_INTERVALS,
  };
}

/** Merges `patch` into a JSON settings file the agent's helper wrote. */
function patchJson(file: string, patch: Record<string, unknown>): void {
  const current = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  writeFileSync(file, `${JSON.stringify({ ...current, ...patch }, null, 2)}\n`, { mode: 0o600 });
}

/** Gemini CLI / Qwen Code settings.json `telemetry` (their shared schema). */
const settingsTelemetry = (otlp: LaptopOtlp) => ({
  telemetry: {
    enabled: true,
    target: 'local',
    otlpEndpoint: trimSlash(otlp.endpoint),
    otlpProtocol: 'http',
    logPrompts: false,
  },
});

/** Codex's `[otel]` table: logs and metrics over OTLP/HTTP with the key as a header. */
function codexOtelToml(otlp: LaptopOtlp): string {
  const protocol = otlp.protocol === 'http/json' ? 'json' : 'binary';
  const exporter = (signal: string) =>
    `{ otlp-http = { endpoint = ${JSON.stringify(`${trimSlash(otlp.endpoint)}/v1/${signal}`)}, protocol = "${protocol}", headers = { "Authorization" = ${JSON.stringify(`Bearer ${otlp.token}`)} } } }`;
  return [
    '',
    '[otel]',
    'environment = "laptop"',
    'log_user_prompt = false',
    `exporter = ${exporter('logs')}`,
    `metrics_exporter = ${exporter('metrics')}`,
    'trace_exporter = "none"',
    '',
  ].join('\n');
}

/**
 * The environment and files of one laptop run of `tool` in `home` (created by the caller): what a user
 * would put in their shell profile and config files. Returns the CLI's environment.
 */
export function laptopCliEnv(tool: string, home: string, opts: LaptopRunOptions): Record<string, string> {
  const adapter = getAdapter(tool);
  const base = trimSlash(opts.baseUrl);
  // The agent's per-session files, written into the laptop's home (a user's ~/.codex etc.).
  const files = adapter.prepareSessionDir ? adapter.prepareSessionDir(home, base) : {};
  const env = buildCliEnv(adapter, { ...process.env, HOME: home }, opts.key, base, files);
  const otlp = opts.otlp;
  if (tool === 'cli_beta') {
    // A laptop user sets ANTHROPIC_AUTH_TOKEN (sent as `Authorization: Bearer`), not the agent's x-api-key.
    delete env.ANTHROPIC_API_KEY;
    env.ANTHROPIC_AUTH_TOKEN = opts.key;
    if (otlp) {
      // DISABLE_TELEMETRY concerns Anthropic's own metrics endpoint; the OTel export is separate.
      Object.assign(env, otelEnv(otlp), {
        CLAUDE_CODE_ENABLE_TELEMETRY: '1',
        OTEL_LOGS_EXPORTER: 'otlp',
        OTEL_METRICS_EXPORTER: 'otlp',
        // Its exporters get 2 s to flush at exit by default: on a loaded CI machine the last export
        // (with the turn's request event and metrics) missed that and never left.
        CLAUDE_CODE_OTEL_SHUTDOWN_TIMEOUT_MS: '10000',
      });
    }
  } else if (tool === 'cli_gamma') {
    if (otlp) appendFileSync(path.join(home, 'config.toml'), codexOtelToml(otlp));
    env.CODEX_HOME = home;
  } else if (tool === 'cli_delta' && otlp) {
    patchJson(path.join(files.GEMINI_CLI_HOME!, '.gemini', 'settings.json'), settingsTelemetry(otlp));
    Object.assign(env, otelEnv(otlp), { GEMINI_TELEMETRY_ENABLED: 'true' });
  } else if (tool === 'cli_alpha' && otlp) {
    patchJson(path.join(files.QWEN_HOME!, 'settings.json'), settingsTelemetry(otlp));
    Object.assign(env, otelEnv(otlp), { QWEN_TELEMETRY_ENABLED: 'true' });
  }
  return env;
}

/** Runs `cliPath` (the real CLI of `tool`) once with one prompt, as on a laptop. */
export async function runLaptopCli(
  tool: string,
  cliPath: string,
  opts: LaptopRunOptions,
): Promise<LaptopRun> {
  const adapter = getAdapter(tool);
  const home = mkdtempSync(path.join(os.tmpdir(), `svc-laptop-${tool}-`));
  const env = laptopCliEnv(tool, home, opts);
  const child = spawn(cliPath, [...adapter.startArgs(opts.model), ...(opts.extraArgs ?? [])], {
    env,
    cwd: opts.cwd ?? mkdtempSync(path.join(home, 'project-')),
    stdio: ['pipe', 'pipe', 'pipe'],
    // Its own process group: Codex's npm entry is a Node wrapper around a native binary, and the kill
    // must reach both (the binary alone would keep the pipes, and this run, open).
    detached: true,
  });
  const kill = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // already gone
    }
  };
  let stdout = '';
  let stderr = '';
  let stopped = false;
  const watch = () => {
    if (!stopped && opts.stopWhen?.test(`${stdout}\n${stderr}`)) {
      stopped = true;
      kill('SIGTERM');
    }
  };
  child.stdout.on('data', (c) => {
    stdout += c;
    watch();
  });
  child.stderr.on('data', (c) => {
    stderr += c;
    watch();
  });
  // The prompt, then EOF: stream-json CLIs end after the turn, per-turn CLIs read it whole.
  child.stdin.end(adapter.formatInput(opts.prompt));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    kill('SIGKILL');
  }, opts.timeoutMs ?? 90_000);
  const closed = new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  let running = true;
  const poll = async () => {
    while (running && !stopped && opts.stopWhenTrue) {
      if (await opts.stopWhenTrue()) {
        stopped = true;
        kill('SIGTERM');
      } else await new Promise((r) => setTimeout(r, 250));
    }
  };
  const polling = poll();
  const code = await closed;
  running = false;
  await polling;
  clearTimeout(timer);
  const infos = jsonLinesOf(stdout)
    .map((l) => adapter.inspect(l))
    .filter((i) => i.turnEnded);
  return { code, timedOut, stopped, stdout, stderr, home, result: infos.at(-1) };
}

export interface CapturedExport {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** With `forwardTo`: the status the service answered this export with. */
  status?: number;
}

export interface OtlpCapture {
  url: string;
  requests: CapturedExport[];
  close(): Promise<void>;
}

/** The request headers an OTLP export carries that the relay passes on. */
const FORWARDED = ['content-type', 'content-encoding', 'authorization', 'user-agent'];

/**
 * A real OTLP/HTTP receiver that keeps every body as sent. Alone it answers 200 with an empty (all
 * accepted) response; with `forwardTo` (the service's base URL) it relays each export there and
 * answers with the service's answer, recorded once it came (so a test knows the export was processed).
 */
export async function startOtlpCapture(opts: { forwardTo?: string } = {}): Promise<OtlpCapture> {
  const requests: CapturedExport[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const captured: CapturedExport = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      if (opts.forwardTo) {
        const headers: Record<string, string> = {};
        for (const h of FORWARDED) if (typeof req.headers[h] === 'string') headers[h] = req.headers[h];
        const answer = await fetch(`${trimSlash(opts.forwardTo)}${captured.path}`, {
          method: captured.method,
          headers,
          body: new Uint8Array(captured.body),
        }).catch(() => undefined);
        const body = answer ? Buffer.from(await answer.arrayBuffer()) : Buffer.alloc(0);
        captured.status = answer?.status ?? 502;
        requests.push(captured);
        res.writeHead(captured.status, {
          'content-type': answer?.headers.get('content-type') ?? 'text/plain',
        });
        res.end(body);
        return;
      }
      requests.push(captured);
      const json = String(req.headers['content-type'] ?? '').includes('json');
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
      res.end(json ? '{}' : '');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
