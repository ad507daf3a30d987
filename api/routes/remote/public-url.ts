// The address agents use to reach this server: SVC_PUBLIC_URL when set (behind a proxy, or when the
// browser and the machines see different names), otherwise the address the request came in on.
import type { Request } from 'express';
import type { AppDeps } from '../../../services/deps.ts';

export function publicUrl(deps: AppDeps, req: Request): string {
  const configured = deps.settings.SVC_PUBLIC_URL;
  if (configured) return configured.replace(/\/+$/, '');
  return `${req.protocol}://${req.get('host')}`;
}

/**
 * Where an agent sends a terminal's output (`relay_url` of terminal.open): the instance holding the
 * browser's socket, by the address agents can reach. SVC_INSTANCE_URL when set (several instances),
 * else SVC_PUBLIC_URL, and only without either the address this instance listens on: an agent told the
 * plain-http listen address of a server published over https would send its token in clear text.
 */
export function agentRelayUrl(
  settings: Pick<AppDeps['settings'], 'SVC_INSTANCE_URL' | 'SVC_PUBLIC_URL'>,
  listenUrl: string,
): string {
  const url = settings.SVC_INSTANCE_URL ?? settings.SVC_PUBLIC_URL ?? listenUrl;
  return url.replace(/\/+$/, '');
}
