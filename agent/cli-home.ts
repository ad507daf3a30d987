// Per-session configuration of the CLIs that read settings files, not only flags and environment:
// Qwen Code (cli_alpha, `QWEN_HOME`) and Gemini CLI (cli_delta, `GEMINI_CLI_HOME`). Both get their
// own home inside the session's private directory (the agent's state folder, created 0700 and
// removed with the session by agent/session.ts; never inside a project), so neither the user's own
// ~/.qwen or ~/.gemini nor a previous session changes where they connect, and their transcripts (which
// `--resume` needs after a model change) stay with the session.
//
// What is written here never contains a secret: the proxy token reaches the CLI only through its key
// variable (agent/adapters.ts buildCliEnv). The files select API-key auth and switch off everything
// that would reach a host other than the proxy (telemetry, usage statistics, update checks); the
// same switches are also set through the CLIs' documented variables (adapters' extraEnv), which take
// precedence over any settings file a project carries. Measured with strace (test/integration/
// real-cli-alpha.test.ts, real-cli-gemini.test.ts): the only connection either CLI then attempts is
// to the proxy address.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Writes `value` as JSON readable by this user only. */
function writePrivateJson(file: string, value: unknown): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
}

/** Settings both CLIs share (Gemini CLI's schema, which Qwen Code inherited). */
const QUIET_SETTINGS = {
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
};

/**
 * Retries per model call in Qwen Code's request layer (its default, 10 with a 60 s first delay for a
 * 429, would keep a turn waiting for many minutes on a proxy refusing an exhausted quota). Its outer
 * retry loop (7 attempts with backoff, not configurable) still applies: an unreachable proxy ends the
 * turn with an error after about 80 s.
 */
export const QWEN_MAX_RETRIES = 1;

/**
 * Qwen Code: `<dir>/qwen` as QWEN_HOME with a settings.json that turns off usage statistics,
 * telemetry, the start-up update check and background memory agents, and bounds retries. Returns
 * the variables for the CLI.
 */
export function writeQwenHome(dir: string): Record<string, string> {
  const home = path.join(dir, 'qwen');
  writePrivateJson(path.join(home, 'settings.json'), {
    ...QUIET_SETTINGS,
    general: { enableAutoUpdate: false },
    model: { generationConfig: { maxRetries: QWEN_MAX_RETRIES } },
    // Background model calls nobody asked for (memory extraction after every turn doubled the calls,
    // and so the tokens, metered to the user), writing memory and skill files: off.
    memory: { enableManagedAutoMemory: false, enableManagedAutoDream: false, enableAutoSkill: false },
  });
  return { QWEN_HOME: home };
}

/**
 * Attempts per model call: a refused or failing proxy ends the turn with an error after ~15 s
 * (Gemini CLI's default of 10 attempts with backoff keeps a turn waiting for minutes).
 */
export const GEMINI_MAX_ATTEMPTS = 3;

/**
 * Gemini CLI: `<dir>/gemini` as GEMINI_CLI_HOME (the CLI uses `<home>/.gemini/`), whose settings.json
 * selects API-key auth (`security.auth.selectedType: "gemini-api-key"`, so no Google login is ever
 * attempted), turns off usage statistics, telemetry, auto-update and its notification, and bounds
 * retries. Returns the variables for the CLI.
 */
export function writeGeminiHome(dir: string): Record<string, string> {
  const home = path.join(dir, 'gemini');
  writePrivateJson(path.join(home, '.gemini', 'settings.json'), {
    ...QUIET_SETTINGS,
    security: { auth: { selectedType: 'gemini-api-key' } },
    general: {
      enableAutoUpdate: false,
      enableAutoUpdateNotification: false,
      maxAttempts: GEMINI_MAX_ATTEMPTS,
    },
  });
  return { GEMINI_CLI_HOME: home };
}
