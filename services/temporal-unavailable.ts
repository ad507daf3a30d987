// The one rule for "Temporal cannot serve this call now" (issue 27, item 1). The Temporal client wraps
// the gRPC status it got in the `cause` of its own errors (ServiceError "Workflow Update failed",
// WorkflowUpdateRPCTimeoutOrCancelledError, "Failed to connect to Temporal server"), sometimes twice,
// so the rule walks the whole cause chain. Every API path that calls Temporal maps a match to
// `backgroundUnavailable()` (503 with Retry-After) and lets anything else through to its own handling.
import { NamespaceNotFoundError } from '@temporalio/common';
import { ServiceUnavailableError } from '../domain/errors.ts';

export const BACKGROUND_UNAVAILABLE = 'Background processing is unavailable';

/** Retry-After (seconds) of a 503 caused by Temporal: about one retry budget plus a reconnect. */
export const BACKGROUND_RETRY_AFTER_SECONDS = 5;

/**
 * gRPC status codes: the server could not be reached, did not answer within the call's budget, or is
 * shedding load (RESOURCE_EXHAUSTED: the client's retries of it are cut by the same budget).
 */
const GRPC_UNAVAILABLE = 14;
const GRPC_DEADLINE_EXCEEDED = 4;
const GRPC_RESOURCE_EXHAUSTED = 8;
/** Node socket errors of a connection that cannot be made or was lost. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'EPIPE',
]);
/**
 * Message forms of the same causes when no code survives: grpc-js's status line ("14 UNAVAILABLE:
 * No connection established"), the client's first connection ("Failed to connect before the
 * deadline", "Failed to connect to Temporal server").
 */
const UNREACHABLE_TEXT =
  /^(14 UNAVAILABLE|4 DEADLINE_EXCEEDED)\b|Failed to connect (before the deadline|to Temporal)/i;
/**
 * The server's answer for a namespace that does not exist ("Namespace x is not found."), when the
 * client did not turn it into a NamespaceNotFoundError (its WorkflowNotFoundError keeps only the text).
 */
const NAMESPACE_MISSING_TEXT = /\bnamespace\b[^.]*\bnot found/i;

export type TemporalUnavailability = { kind: 'unreachable' | 'namespace_missing'; detail: string };

/** Why Temporal cannot serve the call that failed with `err`, or undefined when that is not the reason. */
export function temporalUnavailability(err: unknown): TemporalUnavailability | undefined {
  const seen = new Set<unknown>();
  for (
    let e: unknown = err;
    e && typeof e === 'object' && !seen.has(e);
    e = (e as { cause?: unknown }).cause
  ) {
    seen.add(e);
    const { code, message = '', details = '' } = e as { code?: unknown; message?: string; details?: string };
    const text = `${details} ${message}`;
    if (e instanceof NamespaceNotFoundError) return { kind: 'namespace_missing', detail: e.message };
    if (NAMESPACE_MISSING_TEXT.test(text)) return { kind: 'namespace_missing', detail: details || message };
    if (code === GRPC_UNAVAILABLE || code === GRPC_DEADLINE_EXCEEDED || code === GRPC_RESOURCE_EXHAUSTED)
      return { kind: 'unreachable', detail: details || message };
    if (typeof code === 'string' && SOCKET_CODES.has(code)) return { kind: 'unreachable', detail: message };
    if (UNREACHABLE_TEXT.test(message)) return { kind: 'unreachable', detail: message };
  }
  return undefined;
}

export const isTemporalUnavailable = (err: unknown) => temporalUnavailability(err) !== undefined;

/** The API's answer while Temporal cannot serve: 503 with Retry-After. */
export const backgroundUnavailable = () =>
  new ServiceUnavailableError(BACKGROUND_UNAVAILABLE, BACKGROUND_RETRY_AFTER_SECONDS);

/** Throws `backgroundUnavailable()` when `err` means Temporal cannot serve now; otherwise returns. */
export function rethrowIfTemporalUnavailable(err: unknown): void {
  if (isTemporalUnavailable(err)) throw backgroundUnavailable();
}

/** The operator's fix for a missing namespace, as /readyz reports it. */
export const namespaceMissingDetail = (namespace: string) =>
  `Temporal namespace '${namespace}' does not exist: create it with \`temporal operator namespace create ${namespace}\``;
