// The address agents use to reach this server: SVC_PUBLIC_URL when set (behind a proxy, or when the
// browser and the machines see different names), otherwise the address the request came in on.
import type { Request } from 'express';
import type { AppDeps } from '../../deps.ts';

export function publicUrl(deps: AppDeps, req: Request): string {
  const configured = deps.settings.SVC_PUBLIC_URL;
  if (configured) return configured.replace(/\/+$/, '');
  return `${req.protocol}://${req.get('host')}`;
}
