// The real AI CLIs, installed from the npm registry at the versions agent/cli-packages.ts pins, into a
// per-user cache shared by test runs and fresh clones (~/.cache/svc/clis/<package>@<version>).
// `npm run clis:install` fills it (CI does, before the tests); a test that needs a CLI that is not
// there skips with the reason, never passes silently.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLI_PACKAGES, type CliPackage, cliPackageSpec } from '../../agent/cli-packages.ts';

export const CLI_CACHE_DIR =
  process.env.SVC_CLI_CACHE_DIR || path.join(os.homedir(), '.cache', 'svc', 'clis');

const dirOf = (p: CliPackage) => path.join(CLI_CACHE_DIR, cliPackageSpec(p).replace(/[/@]/g, '_'));

/** Path of the installed executable of a tool id's CLI, or why it is not available. */
export function realCli(toolId: string): { path: string } | { skip: string } {
  const p = CLI_PACKAGES[toolId];
  if (!p) return { skip: `no CLI package is pinned for ${toolId}` };
  const bin = path.join(dirOf(p), 'node_modules', '.bin', p.bin);
  if (!existsSync(bin))
    return {
      skip: `${cliPackageSpec(p)} is not installed in ${CLI_CACHE_DIR}: run \`npm run clis:install\``,
    };
  return { path: bin };
}

/** Installs one pinned CLI into the cache (idempotent). Resolves false, with the npm output, on failure. */
export async function installRealCli(
  toolId: string,
  log: (line: string) => void,
): Promise<{ ok: boolean; output: string }> {
  const p = CLI_PACKAGES[toolId]!;
  if ('path' in realCli(toolId)) return { ok: true, output: 'already installed' };
  const dir = dirOf(p);
  mkdirSync(dir, { recursive: true });
  log(`installing ${cliPackageSpec(p)} into ${dir} ...`);
  const child = spawn(
    'npm',
    ['install', '--no-audit', '--no-fund', '--no-save', '--prefix', dir, cliPackageSpec(p)],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (c) => (output += c));
  child.stderr.on('data', (c) => (output += c));
  const code: number = await new Promise((resolve) => child.on('exit', (c) => resolve(c ?? 1)));
  return { ok: code === 0 && 'path' in realCli(toolId), output };
}
