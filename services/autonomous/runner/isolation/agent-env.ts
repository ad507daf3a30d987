// The environment of an isolated agent CLI (spec document 2, "Execution isolation rules": it starts from
// an empty environment). Nothing of the service's own environment is read: PATH is a fixed system
// path (the CLI is started by its absolute path from autonomous.cli_paths or found on it), HOME is the
// line's CLI home (owned by the agent account), LANG a fixed UTF-8 locale, then the adapter's own
// non-secret variables and the proxy base URL and line token (agent/adapters.ts buildCliEnv sets
// those last, so nothing can point the CLI away from the proxy).
import { buildCliEnv, type CliAdapter } from '../../../../agent/adapters.ts';

export const AGENT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
export const AGENT_LANG = 'C.UTF-8';

export function isolatedCliEnv(
  adapter: CliAdapter,
  home: string,
  token: string,
  proxyBaseUrl: string,
  adapterEnv: Record<string, string>,
): Record<string, string> {
  return buildCliEnv(
    adapter,
    { PATH: AGENT_PATH, HOME: home, LANG: AGENT_LANG },
    token,
    proxyBaseUrl,
    adapterEnv,
    'linux',
  );
}
