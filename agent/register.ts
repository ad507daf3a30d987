// One-time registration with a registration token (PROTOCOL.md "Registration").

import { ensureMachineId, type LoadedConfig } from './config.ts';
import { availableCliTools, hostInfo } from './host.ts';
import type { Logger } from './log.ts';
import type { RegisterRequest } from './protocol.ts';
import { errorText, isRegisterResponse, postRegister } from './transport.ts';
import { AGENT_VERSION } from './version.ts';

export class RegistrationError extends Error {}

const NEW_TOKEN_HINT =
  'A registration token is single-use and the server consumes it even when registration fails: ' +
  'ask a system administrator for a new one, set it as "registration_token" in config.json and run the ' +
  '"register" command again (or re-run the install script with --token).';

export function capabilities(loaded: LoadedConfig): Record<string, unknown> {
  const { config } = loaded;
  return {
    cli_tools: availableCliTools(config),
    default_cli_tool: config.cli_tool,
    node: process.version,
    platform: process.platform,
    arch: hostInfo().arch,
    max_sessions: config.max_sessions,
    transports: ['http_polling'],
    pause: process.platform !== 'win32',
  };
}

/** Registers, stores agent_token (0600) and drops the used registration token from config.json. */
export async function register(loaded: LoadedConfig, log: Logger): Promise<{ machineId: string }> {
  const { config, store } = loaded;
  if (!config.registration_token) {
    throw new RegistrationError(`no "registration_token" in ${store.path}. ${NEW_TOKEN_HINT}`);
  }
  const machineId = ensureMachineId(loaded);
  const host = hostInfo();
  const body: RegisterRequest = {
    registration_token: config.registration_token,
    machine_id: machineId,
    machine_name: config.machine_name || host.hostname,
    hostname: host.hostname,
    os_type: host.os_type,
    os_version: host.os_version,
    capabilities: capabilities(loaded),
    agent_version: AGENT_VERSION,
    cli_path: config.cli_path,
    work_dir: config.work_dir,
    // An existing registration of this machine_id is only renewed with proof that we hold it.
    ...(config.agent_token ? { agent_token: config.agent_token } : {}),
  };
  log.info('registering with server', { server_url: config.server_url, machine_id: machineId });

  let result: Awaited<ReturnType<typeof postRegister>>;
  try {
    result = await postRegister(config.server_url, body);
  } catch (err) {
    throw new RegistrationError(
      `could not reach ${config.server_url}: ${(err as Error).message}. ` +
        `Check the server URL and that this machine reaches its HTTP port. ${NEW_TOKEN_HINT}`,
    );
  }
  if (result.status >= 400 && result.status < 500) {
    // The token is dead either way; keep config.json from retrying it on every start.
    store.update({}, ['registration_token']);
    config.registration_token = '';
    const reason = errorText(result.body) || `HTTP ${result.status}`;
    throw new RegistrationError(`the server refused the registration token (${reason}). ${NEW_TOKEN_HINT}`);
  }
  if ((result.status !== 200 && result.status !== 201) || !isRegisterResponse(result.body)) {
    throw new RegistrationError(
      `unexpected answer from the server (HTTP ${result.status}). ${NEW_TOKEN_HINT}`,
    );
  }
  const finalId = result.body.machine_id || machineId;
  store.update({ agent_token: result.body.agent_token, machine_id: finalId }, ['registration_token']);
  config.agent_token = result.body.agent_token;
  config.machine_id = finalId;
  config.registration_token = '';
  log.info('registered', { machine_id: finalId });
  return { machineId: finalId };
}
