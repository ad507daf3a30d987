// Facts about this machine reported at registration.
import { accessSync, constants } from 'node:fs';
import { arch, hostname, platform, release } from 'node:os';
import { delimiter, join } from 'node:path';
import { getAdapter, KNOWN_CLI_TOOLS } from './adapters.ts';

export function osType(p: NodeJS.Platform = platform()): string {
  // Spec: lower-case OS name. "windows" reads better than os.type()'s "windows_nt".
  return p === 'win32' ? 'windows' : p.toLowerCase();
}

export function hostInfo(): { hostname: string; os_type: string; os_version: string; arch: string } {
  return { hostname: hostname(), os_type: osType(), os_version: release(), arch: arch() };
}

/** Full path of an executable found on PATH, or null. */
export function findOnPath(name: string, env: NodeJS.ProcessEnv = process.env): string | null {
  if (!name) return null;
  const exts = process.platform === 'win32' ? ['', '.cmd', '.exe', '.bat'] : [''];
  const candidates =
    name.includes('/') || name.includes('\\')
      ? [name]
      : (env.PATH ?? '')
          .split(delimiter)
          .filter(Boolean)
          .map((dir) => join(dir, name));
  for (const base of candidates) {
    for (const ext of exts) {
      try {
        accessSync(base + ext, constants.X_OK);
        return base + ext;
      } catch {
        // keep looking
      }
    }
  }
  return null;
}

/** CLI tools this machine can start now: the configured one (via cli_path) and any found on PATH. */
export function availableCliTools(config: { cli_tool: string; cli_path: string }): string[] {
  const tools = new Set<string>();
  if (config.cli_path && findOnPath(config.cli_path)) tools.add(config.cli_tool);
  for (const id of KNOWN_CLI_TOOLS) {
    if (findOnPath(getAdapter(id).executable)) tools.add(id);
  }
  return [...tools];
}
