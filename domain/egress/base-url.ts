// The shape rules for a stored provider key's base_url, pure (the DNS part of the write-time check is
// services/egress/base-url.ts). Every writer: an http(s) URL with no credentials in it (userinfo or a
// key/token/secret query parameter would end up in logs and audit rows) and no fragment. A key written
// by a tenant administrator additionally: https only, and a host that is not loopback, private,
// link-local, metadata or a local name (address-policy.ts), unless the platform allow-list names it.
// System administrators may point a key anywhere (self-hosted gateways on private networks are normal).
import { allowListOf, hostRefusal, isAllowListed, normalizeHost, refusalMessage } from './address-policy.ts';

/** Who writes the key: decides the policy at write time and, through the stored origin, at connect time. */
export type KeyWriter = 'system_admin' | 'tenant_admin';

export type BaseUrlCheck =
  | {
      ok: true;
      /** The URL to store: parsed and re-serialised, trailing slashes removed. */
      url: string;
      /** Host without brackets or trailing dot, lower case. */
      host: string;
      /** The host is a name whose addresses still have to be checked (tenant policy, not allow-listed). */
      resolve: boolean;
    }
  | { ok: false; message: string };

const SECRET_PARAM = ['key', 'token', 'secret', 'password', 'signature', 'sig'];

export function checkBaseUrlShape(
  raw: string,
  writer: KeyWriter,
  allowHosts: readonly string[],
): BaseUrlCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, message: 'base_url must be an http or https URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { ok: false, message: 'base_url must be an http or https URL' };
  if (url.username || url.password) return { ok: false, message: 'base_url must not contain credentials' };
  for (const name of url.searchParams.keys()) {
    const n = name.toLowerCase();
    if (SECRET_PARAM.some((s) => n.includes(s)))
      return { ok: false, message: 'base_url must not carry a key in its query; store the key as api_key' };
  }
  if (url.hash) return { ok: false, message: 'base_url must not contain a fragment' };

  const host = normalizeHost(url.hostname);
  const serialized = trimTrailingSlashes(url.href);
  if (writer === 'system_admin' || isAllowListed(host, allowListOf(allowHosts)))
    return { ok: true, url: serialized, host, resolve: false };

  if (url.protocol !== 'https:')
    return { ok: false, message: 'base_url must use https for keys stored by a tenant administrator' };
  const refusal = hostRefusal(host);
  if (refusal !== null) return { ok: false, message: refusalMessage(host, refusal) };
  return { ok: true, url: serialized, host, resolve: true };
}

/** A loop, not /\/+$/ (which backtracks quadratically over a long run of slashes not at the end). */
function trimTrailingSlashes(s: string): string {
  let end = s.length;
  while (end > 0 && s.charCodeAt(end - 1) === 47) end--;
  return s.slice(0, end);
}
