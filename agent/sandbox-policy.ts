// The one sandbox policy for every process the service or the agent starts on behalf of a user (an AI
// CLI of a remote session or of an autonomous step, a repository's CI or pre-commit hook, a terminal
// shell). Pure: what the sandbox sees is decided here and turned into bubblewrap arguments; running it
// (probe, network gate, spawn) is in the files beside this one.
//
// What a sandboxed process sees (identical paths inside and out, so Git's absolute `gitdir:` links and
// the CLIs' configured homes still resolve):
//   read-write  the working tree, a private home, the extra writable paths given (a CLI's session dir);
//   read-only   the system's binaries and libraries (/usr and the merged-/usr links), a few files of
//               /etc that programs need (certificates, time zone, alternatives; never shadow or the
//               host's passwd), the tool's own install, the Git metadata of the working tree;
//   private     /tmp (tmpfs), /proc of its own pid namespace, a minimal /dev, an /etc/passwd that names
//               only the sandbox user;
//   hidden      everything else of the host (the service's data directory, its config and secrets,
//               the agent's folder and token, other sessions' homes and worktrees), and `hide` paths
//               masked with an empty tmpfs even where they lie inside the working directory or a
//               read-only path (a project that contains the agent's folder);
//   processes   its own pid namespace: no other session's process, environ or fds can be seen;
//   network     its own network namespace: nothing but loopback. With a model-proxy gate
//               (sandbox-gate.ts) one loopback port inside is bridged to a Unix socket outside that
//               forwards only the model proxy's path prefix, so the Temporal port, the database, the
//               API's other routes and every other host stay out of reach;
//   environment exactly the variables given: bubblewrap is started with them alone and passes them on
//               (so /proc/<pid>/environ of the sandbox's outer process shows what the process got).
// The process keeps the starting account's uid/gid inside its user namespace, or 1000 when that is root
// (CLIs refuse some modes as root): it holds no capability and can write only what is bound writable.
import path from 'node:path';

/** The loopback port inside the sandbox's network namespace that reaches the model-proxy gate. */
export const SANDBOX_PROXY_PORT = 18080;
/** Where the run's own directory (policy.runDir) appears inside the sandbox, read-only. */
export const SANDBOX_RUN_DIR = '/run/svc-sandbox';
/** The model-proxy gate's socket inside (the gate listens at runDir/proxy.sock). */
export const SANDBOX_PROXY_SOCKET = `${SANDBOX_RUN_DIR}/proxy.sock`;
/** The sandbox user's ids inside its user namespace when the starting account is root. */
export const SANDBOX_UID = 1000;
export const SANDBOX_GID = 1000;

/** The ids inside: the starting account's own (as in an unprivileged namespace), never root. */
export function insideIds(outside: { uid: number; gid: number }): { uid: number; gid: number } {
  return outside.uid === 0 ? { uid: SANDBOX_UID, gid: SANDBOX_GID } : outside;
}

/** Read-only system locations every sandbox gets (missing ones are skipped). */
export const SYSTEM_READ_ONLY = [
  '/usr',
  '/opt/node',
  '/etc/alternatives',
  '/etc/ssl',
  '/etc/ca-certificates',
];
/** Single files of /etc a program may need (missing ones are skipped). */
export const SYSTEM_FILES = ['/etc/localtime', '/etc/ld.so.cache', '/etc/nsswitch.conf', '/etc/mime.types'];
/** Merged-/usr links (Debian, Ubuntu, Fedora): created as symlinks inside. */
export const USR_LINKS: Array<[link: string, target: string]> = [
  ['/bin', 'usr/bin'],
  ['/sbin', 'usr/sbin'],
  ['/lib', 'usr/lib'],
  ['/lib64', 'usr/lib64'],
];

export interface SandboxPolicy {
  /** The process's working directory: bound read-write. */
  workdir: string;
  /** The private home (HOME): bound read-write. */
  home: string;
  /** Other paths bound read-write (a CLI's per-session directory). */
  writable?: string[];
  /** Paths bound read-only (the tool's install, a runtime, the Git metadata). */
  readable?: string[];
  /** Paths masked with an empty tmpfs even when inside a bound path (the agent's folder). */
  hide?: string[];
  /** The ids inside the sandbox (insideIds). */
  ids: { uid: number; gid: number };
  /**
   * The run's own directory, made by the launcher: passwd, group and hosts (etcFiles), and when the
   * network is gated the bridge script and the gate's socket. Bound read-only at SANDBOX_RUN_DIR.
   */
  runDir: string;
}

export interface HostPaths {
  /** Whether a path exists on the host (the only I/O the pure builder needs, given by the caller). */
  exists(p: string): boolean;
  /** Whether a path is a symlink on the host (merged /usr links). */
  isSymlink(p: string): boolean;
}

/** `child` is `parent` or below it (absolute, normalised paths). */
export function within(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** The contents of the sandbox's /etc/passwd and /etc/group: the sandbox user only. */
export function etcFiles(
  home: string,
  ids: { uid: number; gid: number },
): { passwd: string; group: string; hosts: string } {
  return {
    passwd: `root:x:0:0:root:/nonexistent:/usr/sbin/nologin\nsandbox:x:${ids.uid}:${ids.gid}:sandbox:${home}:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
    group: `root:x:0:\nsandbox:x:${ids.gid}:\nnogroup:x:65534:\n`,
    hosts: '127.0.0.1 localhost\n::1 localhost\n',
  };
}

/** bubblewrap's arguments for a policy, ending with `--` (the command follows). */
export function bwrapArgs(policy: SandboxPolicy, host: HostPaths): string[] {
  for (const p of [policy.workdir, policy.home, ...(policy.writable ?? []), ...(policy.readable ?? [])])
    if (!path.isAbsolute(p)) throw new Error(`sandbox paths must be absolute: ${p}`);
  const a: string[] = [
    '--unshare-all',
    // No --die-with-parent: a SIGTERM to the run's process group would kill bubblewrap's monitor at
    // once and, through it, the CLI with SIGKILL before it saved its conversation. The callers own the
    // process group (detached) and end all of it, the sandbox included, as without a sandbox.
    '--uid',
    String(policy.ids.uid),
    '--gid',
    String(policy.ids.gid),
    '--hostname',
    'sandbox',
  ];
  for (const dir of SYSTEM_READ_ONLY) if (host.exists(dir)) a.push('--ro-bind', dir, dir);
  for (const [link, target] of USR_LINKS)
    if (host.isSymlink(link)) a.push('--symlink', target, link);
    else if (host.exists(link)) a.push('--ro-bind', link, link);
  for (const file of SYSTEM_FILES) if (host.exists(file)) a.push('--ro-bind', file, file);
  a.push(
    '--ro-bind',
    path.join(policy.runDir, 'passwd'),
    '/etc/passwd',
    '--ro-bind',
    path.join(policy.runDir, 'group'),
    '/etc/group',
    '--ro-bind',
    path.join(policy.runDir, 'hosts'),
    '/etc/hosts',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--tmpfs',
    '/tmp',
  );
  // Read-only first, then the working directory (a worktree under a tool dir stays writable; its own
  // Git metadata read-only again over it); then the
  // masks: a hidden path inside either is replaced by an empty tmpfs; then the private home and the
  // other writable paths, which may lie inside a mask (the session's own directory in the agent's).
  const readable = unique(policy.readable ?? []).filter((p) => host.exists(p));
  const inWorkdir = (p: string) => within(path.resolve(policy.workdir), p);
  for (const p of readable.filter((r) => !inWorkdir(r))) a.push('--ro-bind', p, p);
  a.push('--bind', policy.workdir, policy.workdir);
  // Read-only paths inside the working directory (its .git) go over the writable bind.
  for (const p of readable.filter(inWorkdir)) a.push('--ro-bind', p, p);
  const exposed = [policy.workdir, ...readable];
  for (const h of unique(policy.hide ?? []))
    if (exposed.some((b) => within(b, h)) && host.exists(h)) a.push('--tmpfs', h);
  for (const p of unique([policy.home, ...(policy.writable ?? [])]))
    if (p !== path.resolve(policy.workdir)) a.push('--bind', p, p);
  a.push('--ro-bind', policy.runDir, SANDBOX_RUN_DIR);
  // The sandbox's own root (a tmpfs holding the mount points) read-only: only the binds above write.
  a.push('--remount-ro', '/');
  a.push('--chdir', policy.workdir, '--');
  return a;
}

function unique(list: string[]): string[] {
  return [...new Set(list.map((p) => path.resolve(p)))];
}
