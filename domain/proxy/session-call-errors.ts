// What the model proxy records on an agent session when one of its model calls fails
// (agent_sessions.last_provider_error, db/repositories/session-provider-errors.ts), pure.
//
// Two kinds of fact share that one column, because the autonomous runner needs exactly one answer to
// "why did the last model call of this line fail" (the last failed call explains the CLI's exit):
//   - the class of an error the PROVIDER answered and the proxy relayed (provider-errors.ts), and
//   - one of the proxy's OWN quota refusals (api/llm-proxy/proxy-error.ts types `quota_exceeded`, 429,
//     and `quota_check_failed`, 503): the call never reached the provider.
// They are kept as two types, not one widened ProviderErrorClass: a quota refusal is not something a
// provider said (classifyProviderError can never return it, and the runner must not report it as "the
// provider's last error"), and the spec gives it another behaviour (document 2 "Errors" 4: application
// quota -> fail-closed pause with auto-resume; upstream hard quota -> manual resume). The stored
// values of the two sets are disjoint, and a refusal is stored under the proxy's own error type, which
// is also the structured code the runner's envelope carries (domain/autonomous/errors.ts maps it).
import { PROVIDER_ERROR_CLASSES, type ProviderErrorClass } from './provider-errors.ts';

/** The proxy's own refusals the runner classifies (the same strings as the proxy's error types). */
export type ProxyQuotaRefusal = 'quota_exceeded' | 'quota_check_failed';

export const PROXY_QUOTA_REFUSALS: readonly ProxyQuotaRefusal[] = ['quota_exceeded', 'quota_check_failed'];

/** One failed model call of a session, as stored. */
export type SessionCallError = ProviderErrorClass | ProxyQuotaRefusal;

export function isProxyQuotaRefusal(value: string | null | undefined): value is ProxyQuotaRefusal {
  return value !== null && value !== undefined && (PROXY_QUOTA_REFUSALS as readonly string[]).includes(value);
}

export function isProviderErrorClass(value: string | null | undefined): value is ProviderErrorClass {
  return (
    value !== null && value !== undefined && (PROVIDER_ERROR_CLASSES as readonly string[]).includes(value)
  );
}

/** A stored value read back: a known fact, or null for anything else (an older or unknown value). */
export function sessionCallErrorOf(stored: string | null | undefined): SessionCallError | null {
  return isProviderErrorClass(stored) || isProxyQuotaRefusal(stored) ? stored : null;
}

/** The stored fact split for the runner: what the provider said, or what the proxy refused. */
export function splitSessionCallError(fact: SessionCallError | null): {
  providerError: ProviderErrorClass | null;
  proxyRefusal: ProxyQuotaRefusal | null;
} {
  if (isProxyQuotaRefusal(fact)) return { providerError: null, proxyRefusal: fact };
  return { providerError: fact, proxyRefusal: null };
}
