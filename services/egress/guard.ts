// The proxy's connect-time egress check for keys written by a tenant administrator (the rule itself is
// domain/egress/address-policy.ts).
//
// Why at connect time and not only at write time: a name checked when the key was stored can resolve
// elsewhere later (DNS rebinding, or a record the tenant changes). So the guard sits in the socket's
// own DNS step: its `lookup` (net.connect's hook, given to dedicated keep-alive agents) resolves the
// name, refuses the whole name if ANY of its addresses is refused, and hands the socket exactly the
// addresses it checked. Nothing resolves the name a second time between check and connect, so there
// is nothing to rebind. Literal addresses never reach `lookup` (net skips it), so `refusal` checks the
// URL host first, synchronously.
//
// Cost: one DNS lookup per name per TTL (cached, concurrent lookups coalesced), and only when a new
// socket is opened; keep-alive sockets are reused without any lookup. Keys written by system
// administrators never pass through here (forward.ts uses its plain agents for them), and the tenant
// agents are separate so a socket opened for a system key is never reused for a tenant key.

import type { LookupAddress } from 'node:dns';
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import {
  addressRefusal,
  allowListOf,
  hostRefusal,
  isAllowListed,
  refusalMessage,
} from '../../domain/egress/address-policy.ts';

/** Raised from the guard's lookup; forward.ts answers it with 403 `egress_denied`. */
export class EgressDeniedError extends Error {
  override name = 'EgressDeniedError';
  readonly code = 'EGRESS_DENIED';
}

export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export interface EgressGuard {
  /** The refusal message for a URL host (literal address or local name) before connecting; else null. */
  refusal(host: string): string | null;
  /** Resolves and checks a name, with the cache; rejects with EgressDeniedError. */
  resolve(hostname: string): Promise<LookupAddress[]>;
  /** net.connect's `lookup` hook over `resolve`. */
  lookup: LookupFunction;
  /** Keep-alive agents whose sockets are opened through `lookup`, one per protocol. */
  agents: { 'http:': http.Agent; 'https:': https.Agent };
}

const DEFAULT_TTL_MS = 30_000;
const MAX_CACHED = 1024;
const FREE_SOCKET_TIMEOUT_MS = 30_000;

const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

export function createEgressGuard(
  allowHosts: readonly string[],
  opts: { resolver?: Resolver; ttlMs?: number } = {},
): EgressGuard {
  const allow = allowListOf(allowHosts);
  const resolver = opts.resolver ?? systemResolver;
  const ttlMs = opts.ttlMs ?? DEFAULT_TTL_MS;
  const cache = new Map<string, { until: number; result: LookupAddress[] | EgressDeniedError }>();
  const inFlight = new Map<string, Promise<LookupAddress[]>>();

  const refusal = (host: string): string | null => {
    if (isAllowListed(host, allow)) return null;
    const reason = hostRefusal(host);
    return reason === null ? null : refusalMessage(host, reason);
  };

  /** Every address of the name must be allowed (an allow-listed literal address counts as allowed). */
  const check = (hostname: string, addresses: LookupAddress[]): LookupAddress[] | EgressDeniedError => {
    if (addresses.length === 0) return new EgressDeniedError(`base_url host ${hostname} has no address`);
    for (const a of addresses) {
      if (isAllowListed(a.address, allow)) continue;
      const reason = addressRefusal(a.address);
      if (reason !== null) return new EgressDeniedError(refusalMessage(hostname, reason, true));
    }
    return addresses;
  };

  const resolve = async (hostname: string): Promise<LookupAddress[]> => {
    const key = hostname.toLowerCase();
    if (isAllowListed(key, allow)) return resolver(hostname);
    const early = refusal(key);
    if (early !== null) throw new EgressDeniedError(early);
    const now = Date.now();
    const hit = cache.get(key);
    if (hit !== undefined && hit.until > now) {
      if (hit.result instanceof EgressDeniedError) throw hit.result;
      return hit.result;
    }
    let pending = inFlight.get(key);
    if (pending === undefined) {
      pending = resolver(hostname).then((addresses) => {
        const result = check(hostname, addresses);
        if (cache.size >= MAX_CACHED) cache.clear();
        cache.set(key, { until: Date.now() + ttlMs, result });
        if (result instanceof EgressDeniedError) throw result;
        return result;
      });
      inFlight.set(key, pending);
      // DNS failures are not cached: the next connection asks again.
      pending.then(
        () => inFlight.delete(key),
        () => inFlight.delete(key),
      );
    }
    return pending;
  };

  const lookup = ((hostname: string, options: unknown, callback: unknown) => {
    const cb = (typeof options === 'function' ? options : callback) as (
      err: Error | null,
      address: string | LookupAddress[],
      family?: number,
    ) => void;
    const o = typeof options === 'object' && options !== null ? (options as dns.LookupOptions) : {};
    const family =
      typeof options === 'number'
        ? options
        : o.family === 'IPv4'
          ? 4
          : o.family === 'IPv6'
            ? 6
            : (o.family ?? 0);
    resolve(hostname).then(
      (addresses) => {
        const usable =
          family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : addresses;
        if (usable.length === 0) {
          cb(
            Object.assign(new Error(`no IPv${family} address for ${hostname}`), { code: 'ENOTFOUND' }),
            o.all ? [] : '',
          );
          return;
        }
        if (o.all) cb(null, usable);
        else cb(null, usable[0]!.address, usable[0]!.family);
      },
      (error: Error) => cb(error, o.all ? [] : ''),
    );
  }) as LookupFunction;

  const agentOptions = {
    keepAlive: true,
    scheduling: 'lifo' as const,
    timeout: FREE_SOCKET_TIMEOUT_MS,
    lookup,
  };
  return {
    refusal,
    resolve,
    lookup,
    agents: { 'http:': new http.Agent(agentOptions), 'https:': new https.Agent(agentOptions) },
  };
}

const guards = new Map<string, EgressGuard>();

/**
 * The process's guard for an allow-list (settings are fixed for a process, so there is one; tests
 * start apps with different lists). Sharing it shares the DNS cache and the tenant agents' sockets.
 */
export function egressGuardFor(settings: { egress: { allow_hosts: readonly string[] } }): EgressGuard {
  const key = settings.egress.allow_hosts.join(',');
  let guard = guards.get(key);
  if (guard === undefined) {
    guard = createEgressGuard(settings.egress.allow_hosts);
    guards.set(key, guard);
  }
  return guard;
}
