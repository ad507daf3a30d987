// Is the CLI a new autonomous workflow would run installed on this machine (issue 28 item 3)? Checked
// at creation, before any row or run exists, so a user learns what the operator must install instead
// of watching five attempts fail with `spawn claude ENOENT`. The same resolution as the runner
// (runner/run-cli.ts autonomousExecutable, agent/sandbox.ts resolveExecutable): autonomous.cli_paths
// for the tool, else the adapter's executable on the service's PATH; it must be an executable file.
// Cheap: a stat or a PATH walk, no process is started. A found executable is remembered for
// FOUND_TTL_MS (per command and PATH); a missing one is looked up again every time, so an install is
// seen at once. The answer never echoes a configured path (the user did not choose it).
import { statSync } from 'node:fs';
import { getAdapter } from '../../agent/adapters.ts';
import { CLI_PACKAGES, cliPackageSpec } from '../../agent/cli-packages.ts';
import { resolveExecutable } from '../../agent/sandbox.ts';
import type { Settings } from '../../config/settings.ts';
import { BadRequestError } from '../../domain/errors.ts';
import { autonomousExecutable } from './runner/run-cli.ts';

export const FOUND_TTL_MS = 30_000;
const found = new Map<string, number>();

function runnable(command: string, envPath: string): boolean {
  const key = `${command}\0${envPath}`;
  const until = found.get(key);
  if (until !== undefined && until > Date.now()) return true;
  const exe = resolveExecutable(command, envPath, '/');
  let ok = false;
  try {
    ok = exe !== null && statSync(exe).isFile();
  } catch {}
  if (ok) found.set(key, Date.now() + FOUND_TTL_MS);
  else found.delete(key);
  return ok;
}

/** How to install a tool, in words (the pinned package of agent/cli-packages.ts when there is one). */
function installHint(cliTool: string): string {
  const p = CLI_PACKAGES[cliTool];
  const how = p
    ? `install it with \`npm install -g ${cliPackageSpec(p)}\` or \`npm run clis:install ${cliTool}\` (into ~/.cache/svc/clis)`
    : 'install it';
  return `An operator must ${how} and set its path in autonomous.cli_paths (SVC_AUTONOMOUS__CLI_PATHS)${p ? ` or put \`${p.bin}\` on the service's PATH` : ''}.`;
}

/** 400 naming the CLI and how to install it when `cliTool` cannot be run on this machine. */
export function assertAutonomousCliInstalled(
  settings: { autonomous: Pick<Settings['autonomous'], 'cli_paths'> },
  cliTool: string,
): void {
  const adapter = getAdapter(cliTool);
  const command = autonomousExecutable(settings, adapter);
  const envPath = process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin';
  if (command && runnable(command, envPath)) return;
  const configured = Boolean(settings.autonomous.cli_paths[adapter.id]);
  const what = configured
    ? `the path configured for it in autonomous.cli_paths is not an executable file on the server`
    : `it is not installed on the server${adapter.executable ? ` (\`${adapter.executable}\` is not on the service's PATH)` : ''}`;
  throw new BadRequestError(`cli_tool: the CLI ${cliTool} cannot be run: ${what}. ${installHint(cliTool)}`);
}
