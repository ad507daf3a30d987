// Runs the embedded Temporal dev server (`temporal server start-dev`) configured by temporal-dev.yaml,
// persisted to a file in the data directory. The child gets its own process group so we can stop it
// after the worker has drained; its pid is recorded so a restart after a hard kill reaps the orphan.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Connection } from '@temporalio/client';
import YAML from 'yaml';

export interface DevServerConfig {
  ip: string;
  port: number;
  ui_port: number;
  namespace: string;
  db_filename?: string;
  log_level: string;
  dynamic_config: Record<string, unknown>;
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export function readDevServerConfig(file = path.join(ROOT, 'temporal-dev.yaml')): DevServerConfig {
  const parsed = YAML.parse(readFileSync(file, 'utf8')) ?? {};
  return {
    ip: parsed.ip ?? '127.0.0.1',
    port: Number(parsed.port ?? 7233),
    ui_port: Number(parsed.ui_port ?? 8233),
    namespace: parsed.namespace ?? 'default',
    db_filename: parsed.db_filename,
    log_level: parsed.log_level ?? 'warn',
    dynamic_config: parsed.dynamic_config ?? {},
  };
}

export interface DevServer {
  address: string;
  uiUrl: string;
  namespace: string;
  stop(): Promise<void>;
  child: ChildProcess;
}

export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function portInUse(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host });
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Stops a dev server left behind by a previous run that was killed with SIGKILL. */
async function reapOrphan(pidFile: string, log: (l: string) => void) {
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  rmSync(pidFile, { force: true });
  if (!pid || !alive(pid)) return;
  let cmd = '';
  try {
    cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {}
  if (cmd && !cmd.includes('start-dev')) return; // pid reused by something else
  log(`Stopping a Temporal dev server left running by a previous run (pid ${pid})`);
  try {
    process.kill(-pid, 'SIGTERM');
  } catch {
    process.kill(pid, 'SIGTERM');
  }
  for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
  if (alive(pid)) process.kill(pid, 'SIGKILL');
}

export async function waitForTemporal(address: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  while (Date.now() < deadline) {
    try {
      const conn = await Connection.connect({ address, connectTimeout: 2000 });
      try {
        await conn.healthService.check({});
        return;
      } finally {
        await conn.close();
      }
    } catch (err) {
      lastErr = err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw new Error(
    `Temporal at ${address} did not become ready in ${timeoutMs} ms: ${(lastErr as Error)?.message}`,
  );
}

/** A dev server on ports picked free can still lose one of them to another process before it binds. */
const PORT_TAKEN = /address already in use/;

export async function startDevServer(opts: DevServerOptions): Promise<DevServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startDevServerOnce(opts);
    } catch (err) {
      if (!opts.ephemeralPorts || attempt >= 3 || !PORT_TAKEN.test((err as Error).message)) throw err;
      opts.log?.(`Temporal dev server: a picked port was taken before it bound; trying other ports`);
    }
  }
}

interface DevServerOptions {
  cliPath: string;
  dataDir?: string;
  config?: Partial<DevServerConfig>;
  /** Pick free ports instead of the configured ones (tests). */
  ephemeralPorts?: boolean;
  /** Keep state in memory only (tests). */
  inMemory?: boolean;
  log?: (l: string) => void;
}

async function startDevServerOnce(opts: DevServerOptions): Promise<DevServer> {
  const log = opts.log ?? (() => {});
  const cfg = { ...readDevServerConfig(), ...opts.config };
  if (opts.ephemeralPorts) {
    cfg.port = await freePort(cfg.ip);
    cfg.ui_port = await freePort(cfg.ip);
  }
  const pidFile = opts.dataDir ? path.join(opts.dataDir, 'temporal-dev.pid') : undefined;
  if (pidFile) await reapOrphan(pidFile, log);
  if (await portInUse(cfg.port, cfg.ip))
    throw new Error(
      `Port ${cfg.port} on ${cfg.ip} is already in use, so the embedded Temporal server cannot start. Stop the other process, change "port" in temporal-dev.yaml, or set TEMPORAL_ADDRESS to use that server.`,
    );
  const args = [
    'server',
    'start-dev',
    '--ip',
    cfg.ip,
    '--port',
    String(cfg.port),
    '--ui-port',
    String(cfg.ui_port),
  ];
  args.push('--namespace', cfg.namespace, '--log-level', cfg.log_level, '--log-format', 'json');
  if (!opts.inMemory && cfg.db_filename && opts.dataDir)
    args.push('--db-filename', path.resolve(opts.dataDir, cfg.db_filename));
  for (const [k, v] of Object.entries(cfg.dynamic_config))
    args.push('--dynamic-config-value', `${k}=${JSON.stringify(v)}`);
  const child = spawn(opts.cliPath, args, { detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
  const stderr: string[] = [];
  child.stderr!.on('data', (b: Buffer) => {
    stderr.push(b.toString());
    if (stderr.length > 50) stderr.shift();
  });
  if (pidFile && child.pid) writeFileSync(pidFile, String(child.pid));
  const address = `${cfg.ip}:${cfg.port}`;
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) =>
      reject(new Error(`Temporal dev server exited (code ${code}): ${stderr.join('').slice(-2000)}`)),
    ),
  );
  exited.catch(() => undefined);
  await Promise.race([waitForTemporal(address), exited]);
  let stopped = false;
  return {
    address,
    uiUrl: `http://${cfg.ip}:${cfg.ui_port}`,
    namespace: cfg.namespace,
    child,
    async stop() {
      if (stopped) return;
      stopped = true;
      if (child.exitCode !== null) return;
      const done = new Promise((r) => child.once('exit', r));
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {}
      const timer = setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {}
      }, 10_000);
      await done;
      clearTimeout(timer);
      if (pidFile) rmSync(pidFile, { force: true });
    },
  };
}
