// The egress rule for URLs that tenant administrators control (their stored provider keys' base_url),
// pure: which addresses and host names a tenant-written key may never reach. One place for the rule;
// the write-time check (services/egress/base-url.ts) and the proxy's connect-time guard
// (services/egress/guard.ts) both ask these functions.
//
// Refused: loopback, private (RFC 1918, CGNAT 100.64/10, ULA fc00::/7), link-local (169.254/16,
// fe80::/10, which holds the cloud metadata address 169.254.169.254), unspecified and "this network"
// (0.0.0.0/8, ::), multicast and reserved ranges, and the same IPv4 ranges written inside IPv6
// (IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible ::a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16).
// Names: `localhost` and `*.localhost`, names under the private-use `.internal` (so
// `metadata.google.internal`), `.local` (mDNS) and `.home.arpa` suffixes, and single-label names (the
// resolver completes them with local search domains, e.g. `metadata`). Decimal, octal and hex IPv4
// spellings need no rule of their own: the WHATWG URL parser turns `http://2130706433` and
// `http://0x7f.1` into 127.0.0.1 before these functions see the host, and the proxy connects to the
// host that parser produced.
//
// An operator may exempt hosts with the platform allow-list (`egress.allow_hosts`): a host named there
// (exactly, case-insensitive) is allowed whatever it is or resolves to.
import { BlockList, isIP } from 'node:net';

/** Why a host or address is refused; `null` means allowed. */
export type EgressRefusal = 'loopback' | 'private' | 'link_local' | 'unspecified' | 'reserved' | 'local_name';

const IPV4_DENIED: readonly [string, number, EgressRefusal][] = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'private'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link_local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'],
  ['224.0.0.0', 4, 'reserved'],
  ['240.0.0.0', 4, 'reserved'],
];

const IPV6_DENIED: readonly [string, number, EgressRefusal][] = [
  ['::1', 128, 'loopback'],
  ['::', 128, 'unspecified'],
  ['fc00::', 7, 'private'], // ULA, holds AWS's IPv6 metadata address fd00:ec2::254
  ['fe80::', 10, 'link_local'],
  ['fec0::', 10, 'private'], // deprecated site-local
  ['ff00::', 8, 'reserved'], // multicast
  ['64:ff9b:1::', 48, 'private'], // local-use NAT64 (RFC 8215)
];

/**
 * IPv6 prefixes that carry an IPv4 address, and where: [prefix with the IPv4 part zeroed, bit offset
 * of the IPv4 address]. A denied IPv4 range /p becomes the IPv6 range /(offset + p) under the prefix.
 */
const IPV4_IN_IPV6: readonly [(v4: string) => string, number][] = [
  [(v4) => `::ffff:${v4}`, 96], // IPv4-mapped
  [(v4) => `::${v4}`, 96], // IPv4-compatible (deprecated, still routed by some stacks)
  [(v4) => `64:ff9b::${v4}`, 96], // NAT64 well-known prefix
  [(v4) => sixToFour(v4), 16], // 6to4: 2002:AABB:CCDD::/48
];

function sixToFour(v4: string): string {
  const [a, b, c, d] = v4.split('.').map(Number) as [number, number, number, number];
  const hex = (hi: number, lo: number) => ((hi << 8) | lo).toString(16);
  return `2002:${hex(a, b)}:${hex(c, d)}::`;
}

/** One BlockList per refusal reason, so a check names why (checked in table order). */
const LISTS: [EgressRefusal, BlockList][] = (() => {
  const byReason = new Map<EgressRefusal, BlockList>();
  const list = (r: EgressRefusal) => {
    let l = byReason.get(r);
    if (!l) {
      l = new BlockList();
      byReason.set(r, l);
    }
    return l;
  };
  // IPv6 first, loopback before unspecified: ::1 also lies in ::0.0.0.0/104 and should read "loopback".
  for (const [net, prefix, reason] of IPV6_DENIED) list(reason).addSubnet(net, prefix, 'ipv6');
  for (const [net, prefix, reason] of IPV4_DENIED) {
    list(reason).addSubnet(net, prefix, 'ipv4');
    for (const [embed, offset] of IPV4_IN_IPV6) list(reason).addSubnet(embed(net), offset + prefix, 'ipv6');
  }
  return [...byReason];
})();

/** The refusal for a literal IP address (v4 or v6, without brackets); null when it may be reached. */
export function addressRefusal(address: string): EgressRefusal | null {
  const family = isIP(address);
  if (family === 0) return 'reserved'; // not an address at all: never "allowed" by accident
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const [reason, list] of LISTS) if (list.check(address, type)) return reason;
  return null;
}

const LOCAL_SUFFIXES = ['.localhost', '.internal', '.local', '.home.arpa'];

/** Lower case, without IPv6 brackets and without one trailing dot (`localhost.` is `localhost`). */
export function normalizeHost(host: string): string {
  let h = host.toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h.endsWith('.')) h = h.slice(0, -1);
  return h;
}

/**
 * The refusal for a URL host as written (a name or a literal address), before any DNS lookup; null
 * when the name itself is acceptable (its addresses still have to be checked once resolved).
 */
export function hostRefusal(host: string): EgressRefusal | null {
  const h = normalizeHost(host);
  if (isIP(h) !== 0) return addressRefusal(h);
  if (h === '' || !h.includes('.') || h === 'localhost') return 'local_name';
  for (const suffix of LOCAL_SUFFIXES) if (h.endsWith(suffix)) return 'local_name';
  return null;
}

/** The platform allow-list, normalised once: a Set of hosts exempt from the refusals. */
export function allowListOf(hosts: readonly string[]): ReadonlySet<string> {
  return new Set(hosts.map((h) => normalizeHost(h.trim())).filter((h) => h !== ''));
}

export const isAllowListed = (host: string, allow: ReadonlySet<string>): boolean =>
  allow.size > 0 && allow.has(normalizeHost(host));

/** A sentence for a refusal, safe to show the caller (names the host, never a resolved address). */
export function refusalMessage(host: string, reason: EgressRefusal, resolved = false): string {
  const what: Record<EgressRefusal, string> = {
    loopback: 'a loopback address',
    private: 'a private network address',
    link_local: 'a link-local or metadata address',
    unspecified: 'an unspecified address',
    reserved: 'a reserved address',
    local_name: 'a local or internal host name',
  };
  return `base_url host ${normalizeHost(host)} ${resolved ? 'resolves to' : 'is'} ${what[reason]}, which keys stored by a tenant administrator may not reach (ask a system administrator to add it to egress.allow_hosts)`;
}
