// Which Host headers this server answers. A server that reflected any Host would build agent and
// install URLs from an attacker's name, and a browser tricked by DNS rebinding could reach an API bound
// to loopback under a foreign name. Pure: parsing uses the WHATWG URL parser, no regex on input.

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);
const WILDCARD_BINDS = new Set(['0.0.0.0', '::', '[::]', '']);

export interface AllowedHostsInput {
  /** SVC_PUBLIC_URL, when set. */
  publicUrl?: string;
  /** SVC_INSTANCE_URL, when set: this instance's own address (a terminal relay redirect names it). */
  instanceUrl?: string;
  /** The address the API binds to (HOST). */
  bindHost: string;
  /** SVC_ALLOWED_HOSTS: extra names (reverse-proxy names, LAN names). */
  extra: string[];
}

/** Lower-case host name of a `Host` header value (port and brackets handled by the URL parser), or null. */
export function hostNameOf(header: string | undefined): string | null {
  if (!header || header.length > 300) return null;
  try {
    const url = new URL(`http://${header}`);
    // Anything beyond host[:port] (userinfo, a path) means the header was not a plain Host.
    if (url.username || url.password || url.pathname !== '/' || url.search || url.hash) return null;
    return url.hostname.toLowerCase();
  } catch {
    return null;
  }
}

export function allowedHostNames(input: AllowedHostsInput): Set<string> {
  const names = new Set(LOOPBACK_NAMES);
  for (const url of [input.publicUrl, input.instanceUrl]) {
    if (!url) continue;
    try {
      names.add(new URL(url).hostname.toLowerCase());
    } catch {
      // an invalid SVC_PUBLIC_URL / SVC_INSTANCE_URL is reported by the settings loader
    }
  }
  const bind = input.bindHost.trim().toLowerCase();
  if (!WILDCARD_BINDS.has(bind)) names.add(hostNameOf(bind) ?? bind);
  for (const h of input.extra) {
    const name = hostNameOf(h.trim());
    if (name) names.add(name);
  }
  return names;
}

/** 127.0.0.0/8 spellings count as loopback too (tests and agents use 127.0.0.x). */
export function isAllowedHost(header: string | undefined, allowed: Set<string>): boolean {
  const name = hostNameOf(header);
  if (name === null) return false;
  if (allowed.has(name)) return true;
  return (
    name.startsWith('127.') &&
    name.split('.').length === 4 &&
    name.split('.').every((p) => /^\d{1,3}$/.test(p))
  );
}
