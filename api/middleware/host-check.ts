// Refuses requests whose Host header names no address of this server (see domain/http/allowed-hosts):
// SVC_PUBLIC_URL's, SVC_INSTANCE_URL's (browsers redirected to this instance use it), HOST, loopback
// and SVC_ALLOWED_HOSTS.
import type { RequestHandler } from 'express';
import { allowedHostNames, isAllowedHost } from '../../domain/http/allowed-hosts.ts';
import type { AppDeps } from '../../services/deps.ts';

export function hostCheck(deps: AppDeps): RequestHandler {
  const allowed = allowedHostNames({
    publicUrl: deps.settings.SVC_PUBLIC_URL,
    instanceUrl: deps.settings.SVC_INSTANCE_URL,
    bindHost: deps.settings.HOST,
    extra: deps.settings.SVC_ALLOWED_HOSTS,
  });
  return (req, res, next) => {
    if (isAllowedHost(req.headers.host, allowed)) return next();
    res.status(421).json({
      error:
        'This server does not answer for that Host name. Set SVC_PUBLIC_URL (or add the name to SVC_ALLOWED_HOSTS).',
    });
  };
}
