// The service's side of the sandbox (agent/sandbox.ts holds the policy and the launcher, shared with the
// agent): the operator's switch (SVC_SANDBOX) and its warning at every unconfined run, and the
// start-up / readiness notice.

import {
  cliProxyBaseUrl,
  type SandboxedCommand,
  type SandboxRequest,
  sandboxAvailability,
  sandboxedOrBare,
} from '../../agent/sandbox.ts';
import type { Settings } from '../../config/settings.ts';
import { createLogger } from '../logger.ts';

type SandboxSettings = Pick<Settings, 'SVC_SANDBOX' | 'LOG_LEVEL'>;

let logger: ReturnType<typeof createLogger> | undefined;
const log = (level: string) => (logger ??= createLogger(level));

/** The command to spawn for untrusted work, sandboxed unless the operator switched the sandbox off. */
export function sandboxed(settings: SandboxSettings, req: SandboxRequest): SandboxedCommand {
  return sandboxedOrBare(settings.SVC_SANDBOX, req, (message) =>
    log(settings.LOG_LEVEL).warn({ component: 'sandbox', workdir: req.workdir }, message),
  );
}

/** The proxy base URL a CLI started by the service is given (inside the sandbox: the gate's port). */
export function serviceCliProxyBaseUrl(settings: SandboxSettings, proxyBaseUrl: string): string {
  return cliProxyBaseUrl(settings.SVC_SANDBOX, proxyBaseUrl);
}

/** Whether untrusted work can run here, for start-up and /readyz: ok, off, or unavailable with why. */
export function sandboxStatus(settings: SandboxSettings): {
  status: 'ok' | 'off' | 'unavailable';
  detail: string;
} {
  if (settings.SVC_SANDBOX === 'off')
    return {
      status: 'off',
      detail:
        'SVC_SANDBOX=off: autonomous CLIs, CI and pre-commit hooks run unconfined with the service account',
    };
  const a = sandboxAvailability();
  return a.ok
    ? { status: 'ok', detail: `bubblewrap at ${a.bwrap}` }
    : {
        status: 'unavailable',
        detail: `autonomous steps, CI and pre-commit hooks are refused: ${a.reason}`,
      };
}
