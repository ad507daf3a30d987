// The per-line CLI home of the autonomous runner: `<data dir>/autonomous/cli-homes/<workflow>/<line>`,
// created 0700, kept across the line's runs (a resumed conversation needs the transcript the CLI wrote
// there: Claude Code's ~/.claude, Codex's CODEX_HOME, ...) and across workers sharing the data dir.
// The CLI's HOME points here, so nothing of the service account's own home (credentials, settings,
// other sessions) is in reach through the CLI's defaults. Adapters with per-session settings files
// (agent/cli-home.ts, agent/codex-home.ts) write them under `<home>/.svc-cli`; they never contain the
// proxy token (it reaches the CLI only through its key variable).
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { CliAdapter } from '../../../agent/adapters.ts';

/** A file-name-safe, collision-free name for a workflow id. */
function dirName(workflowId: string): string {
  const safe = workflowId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 48);
  if (safe === workflowId) return safe;
  return `${safe}-${createHash('sha256').update(workflowId).digest('hex').slice(0, 12)}`;
}

export function lineHomePath(dataDir: string, workflowId: string, line: string): string {
  return path.join(dataDir, 'autonomous', 'cli-homes', dirName(workflowId), line);
}

/** Creates the line's home (0700) and the adapter's files; returns HOME and the adapter's variables. */
export function prepareLineHome(
  dataDir: string,
  workflowId: string,
  line: string,
  adapter: CliAdapter,
  proxyBaseUrl: string,
): { home: string; env: Record<string, string> } {
  const home = lineHomePath(dataDir, workflowId, line);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  if (!adapter.prepareSessionDir) return { home, env: {} };
  const dir = path.join(home, '.svc-cli');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const env = adapter.prepareSessionDir(dir, proxyBaseUrl);
  return { home, env };
}
