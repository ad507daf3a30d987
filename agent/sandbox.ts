// Turning a command into its sandboxed form (sandbox-policy.ts says what it sees): the caller spawns the
// returned command, args and env exactly as it would have spawned the bare command (same stdio,
// process group, uid), and calls close() when the process has ended.
//
// Fail closed: when the sandbox cannot be had (not Linux, bubblewrap missing, user namespaces off),
// sandboxCommand throws SandboxUnavailableError with the reason and the fix, and the caller refuses
// the work. Only an operator's explicit off switch (SVC_SANDBOX=off on the service, `sandbox: "off"`
// in the agent's config) runs it bare, and the callers log a warning at every such run.
import { spawnSync } from 'node:child_process';
import {
  accessSync,
  chownSync,
  constants,
  lstatSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type ModelProxyGate, openModelProxyGate } from './sandbox-gate.ts';
import {
  bwrapArgs,
  etcFiles,
  type HostPaths,
  insideIds,
  SANDBOX_PROXY_PORT,
  SANDBOX_PROXY_SOCKET,
  SANDBOX_RUN_DIR,
} from './sandbox-policy.ts';

export class SandboxUnavailableError extends Error {}
/** The command is not on PATH (callers report it as a failed spawn, ENOENT, as without a sandbox). */
export class CommandNotFoundError extends Error {}

export type SandboxMode = 'on' | 'off';

export interface SandboxRequest {
  /** The executable: a path, or a name looked up on env.PATH (on the host, before the sandbox). */
  command: string;
  args: string[];
  /** Working directory, bound read-write. */
  workdir: string;
  /** Private home, bound read-write (HOME in env should name it). */
  home: string;
  /** The process's whole environment (PATH included). */
  env: Record<string, string>;
  writable?: string[];
  readable?: string[];
  hide?: string[];
  /** Network: the model proxy's base URL to gate in (its path is the only prefix allowed), or none. */
  proxyBaseUrl?: string | null;
  /** The account bubblewrap will be started as, when not the caller's (the dedicated agent account). */
  runAs?: { uid: number; gid: number } | null;
}

export interface SandboxedCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
  close(): Promise<void>;
}

const hostPaths: HostPaths = {
  exists: (p) => {
    try {
      lstatSync(p);
      return true;
    } catch {
      return false;
    }
  },
  isSymlink: (p) => {
    try {
      return lstatSync(p).isSymbolicLink();
    } catch {
      return false;
    }
  },
};

const BRIDGE_SOURCE = path.join(path.dirname(new URL(import.meta.url).pathname), 'sandbox-bridge.mjs');
const SYSTEM_PREFIXES = ['/usr/', '/bin/', '/sbin/', '/lib/', '/lib64/'];

/** The account bubblewrap starts as: `runAs`, else this process's. */
function starter(runAs: { uid: number; gid: number } | null | undefined): { uid: number; gid: number } {
  return runAs ?? { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
}

/** The base URL a sandboxed CLI is given for a proxy base URL (the gate's port inside, same path). */
export function sandboxProxyBaseUrl(proxyBaseUrl: string): string {
  const u = new URL(proxyBaseUrl);
  return `http://127.0.0.1:${SANDBOX_PROXY_PORT}${u.pathname.replace(/\/+$/, '')}${u.search}`;
}

/** A name looked up on PATH (as execvp would), or a path made absolute; null when not found. */
export function resolveExecutable(command: string, envPath: string | undefined, cwd: string): string | null {
  if (command.includes('/')) {
    const p = path.resolve(cwd, command);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      return null;
    }
  }
  for (const dir of (envPath ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {}
  }
  return null;
}

/**
 * What of a tool's install the sandbox must read: nothing for the system's own directories; the
 * package directory (above its first `node_modules`) for an npm-installed CLI; else its directory.
 */
export function toolRoots(executable: string): string[] {
  const roots: string[] = [];
  for (const p of new Set([executable, safeRealpath(executable)])) {
    if (SYSTEM_PREFIXES.some((s) => p.startsWith(s))) continue;
    const parts = p.split(path.sep);
    const nm = parts.indexOf('node_modules');
    roots.push(nm > 0 ? parts.slice(0, nm).join(path.sep) || '/' : path.dirname(p));
  }
  return roots;
}

function safeRealpath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/** bubblewrap: SVC_BWRAP_PATH when set (an install off PATH), else `bwrap` on PATH. */
function bwrapPath(): string | null {
  const given = process.env.SVC_BWRAP_PATH;
  if (given) return hostPaths.exists(given) ? given : null;
  return resolveExecutable('bwrap', process.env.PATH ?? '/usr/bin:/bin', '/');
}

let probed: { ok: true; bwrap: string } | null = null;

/** Forgets a successful probe (tests that take bubblewrap away; a probe that failed is never kept). */
export function forgetSandboxProbe(): void {
  probed = null;
}

/** Whether a sandbox can be set up here: ok, or the reason and how to fix it. Cached once it works. */
export function sandboxAvailability(): { ok: true; bwrap: string } | { ok: false; reason: string } {
  if (probed) return probed;
  if (process.platform !== 'linux')
    return {
      ok: false,
      reason: `the sandbox needs Linux with bubblewrap; this is ${process.platform} (set the sandbox off switch only if you accept running this work unconfined)`,
    };
  const bwrap = bwrapPath();
  if (!bwrap)
    return {
      ok: false,
      reason:
        'bubblewrap is not installed (no `bwrap` on PATH, or SVC_BWRAP_PATH names no file): install it, e.g. `apt-get install bubblewrap` (Debian, Ubuntu) or `dnf install bubblewrap` (Fedora)',
    };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-sbx-probe-'));
  try {
    const ids = insideIds(starter(null));
    writeEtc(dir, dir, ids);
    const args = bwrapArgs({ workdir: dir, home: dir, runDir: dir, ids }, hostPaths);
    const r = spawnSync(bwrap, [...args, 'true'], {
      encoding: 'utf8',
      timeout: 10_000,
      env: { PATH: '/usr/bin:/bin' },
    });
    if (r.status === 0) {
      probed = { ok: true, bwrap };
      return probed;
    }
    const detail = (r.stderr || r.error?.message || `exit ${r.status}`).trim().split('\n')[0];
    return {
      ok: false,
      reason: `bubblewrap could not create a sandbox (${detail}); unprivileged user namespaces may be off: enable them (e.g. \`sysctl kernel.unprivileged_userns_clone=1\`, or on Ubuntu 24.04 \`sysctl kernel.apparmor_restrict_unprivileged_userns=0\` or an AppArmor profile for bwrap)`,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function writeEtc(dir: string, home: string, ids: { uid: number; gid: number }): void {
  const etc = etcFiles(home, ids);
  writeFileSync(path.join(dir, 'passwd'), etc.passwd);
  writeFileSync(path.join(dir, 'group'), etc.group);
  writeFileSync(path.join(dir, 'hosts'), etc.hosts);
}

/** The sandboxed form of a command (see the header). Throws SandboxUnavailableError. */
export function sandboxCommand(req: SandboxRequest): SandboxedCommand {
  const available = sandboxAvailability();
  if (!available.ok) throw new SandboxUnavailableError(available.reason);
  const executable = resolveExecutable(req.command, req.env.PATH, req.workdir);
  if (!executable) throw new CommandNotFoundError(`spawn ${req.command} ENOENT`);
  // The run's own directory: passwd/group/hosts, the bridge script and the gate's socket, bound
  // read-only at /run/svc-sandbox inside.
  const runDir = mkdtempSync(path.join(os.tmpdir(), 'svc-sbx-'));
  let gate: ModelProxyGate | null = null;
  try {
    const ids = insideIds(starter(req.runAs));
    writeEtc(runDir, req.home, ids);
    // The sandbox's first process is always the inner launcher (sandbox-bridge.mjs): the model-proxy
    // bridge when the network is gated, and in every case what gives the command default signal
    // dispositions back (bubblewrap itself runs with SIGTERM/SIGINT/SIGHUP ignored, see below).
    const readable = [...(req.readable ?? []), ...toolRoots(executable), ...toolRoots(process.execPath)];
    if (req.proxyBaseUrl) gate = openModelProxyGate(req.proxyBaseUrl, path.join(runDir, 'proxy.sock'));
    writeFileSync(path.join(runDir, 'bridge.mjs'), readFileSync(BRIDGE_SOURCE));
    const command = process.execPath;
    const args = [
      `${SANDBOX_RUN_DIR}/bridge.mjs`,
      req.proxyBaseUrl ? String(SANDBOX_PROXY_PORT) : '-',
      req.proxyBaseUrl ? SANDBOX_PROXY_SOCKET : '-',
      executable,
      ...req.args,
    ];
    const policyArgs = bwrapArgs(
      {
        workdir: req.workdir,
        home: req.home,
        writable: req.writable ?? [],
        readable,
        hide: req.hide ?? [],
        runDir,
        ids,
      },
      hostPaths,
    );
    // Started as another account (the agent account layer), bubblewrap must read the run dir and the
    // process must connect to the gate's socket.
    if (req.runAs)
      for (const name of ['', 'passwd', 'group', 'hosts', 'bridge.mjs', 'proxy.sock']) {
        const p = path.join(runDir, name);
        if (hostPaths.exists(p)) chownSync(p, req.runAs.uid, req.runAs.gid);
      }
    const opened = gate;
    // bubblewrap's monitor dies of a SIGTERM sent to the run's process group, and the sandbox would
    // then end with SIGKILL before the command saved its state; ignored signals survive exec, so a
    // shell sets them ignored and execs bubblewrap, which then ends when the command has ended.
    return {
      command: '/bin/sh',
      args: ['-c', 'trap "" TERM INT HUP; exec "$0" "$@"', available.bwrap, ...policyArgs, command, ...args],
      env: req.env,
      close: async () => {
        await opened?.close();
        rmSync(runDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    void gate?.close();
    rmSync(runDir, { recursive: true, force: true });
    throw err;
  }
}

/** The message logged at every run when the operator turned the sandbox off. */
export const SANDBOX_OFF_WARNING =
  'the sandbox is OFF by the operator: this process runs unconfined, with the rights of the account that starts it';

/**
 * `mode` on: sandboxCommand. Off (the operator's explicit switch): the bare command, after `warn`
 * says so; nothing else changes.
 */
export function sandboxedOrBare(
  mode: SandboxMode,
  req: SandboxRequest,
  warn: (message: string) => void,
): SandboxedCommand {
  if (mode === 'on') return sandboxCommand(req);
  warn(`${SANDBOX_OFF_WARNING}: ${req.command}`);
  return { command: req.command, args: req.args, env: req.env, close: async () => undefined };
}

/** The proxy base URL to give a CLI: the gate's address inside the sandbox, or the real one when off. */
export function cliProxyBaseUrl(mode: SandboxMode, proxyBaseUrl: string): string {
  return mode === 'on' ? sandboxProxyBaseUrl(proxyBaseUrl) : proxyBaseUrl;
}
