// Failures of GitHub API calls as the forge's typed errors (domain/forge/errors.ts), with every
// secret redacted from their messages (the token, and its base64 form used for git over HTTPS):
//   401, 403            ForgePermissionError (the token lacks a scope, is revoked, or has no access;
//                       a secondary rate limit 403 with retry-after is transient instead)
//   404                 ForgeNotFoundError
//   429, 5xx            ForgeTransientError with the status (exponential backoff)
//   no HTTP answer      ForgeTransientError with status null (network; transient network class)
//   egress refusal      ForgePermissionError (the API URL is not allowed: an administrator's fix)
//   anything else       ForgeApiError with GitHub's message
import {
  ForgeApiError,
  ForgeError,
  ForgeNotFoundError,
  ForgePermissionError,
  ForgeTransientError,
} from '../../../domain/forge/errors.ts';
import { EgressDeniedError } from '../../egress/guard.ts';

/** Replaces every occurrence of each secret (and its base64 forms) with `[redacted]`. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) {
    if (!s || s.length < 4) continue;
    for (const form of [
      s,
      Buffer.from(`x-access-token:${s}`).toString('base64'),
      Buffer.from(s).toString('base64'),
    ])
      out = out.split(form).join('[redacted]');
  }
  return out;
}

/** Octokit's RequestError, by shape (its class is a transitive package; `name` is `HttpError`). */
interface RequestErrorLike extends Error {
  status: number;
  response?: { status: number; headers: Record<string, string | undefined>; data: unknown };
  cause?: unknown;
}

export function isRequestError(err: unknown): err is RequestErrorLike {
  return (
    err instanceof Error && err.name === 'HttpError' && typeof (err as RequestErrorLike).status === 'number'
  );
}

/** GitHub's own message of an API error (its JSON `message`), else the error's. */
export function apiMessage(err: unknown): string {
  if (isRequestError(err)) {
    const data = err.response?.data as { message?: unknown } | string | undefined;
    if (data && typeof data === 'object' && typeof data.message === 'string') return data.message;
    if (typeof data === 'string' && data.trim()) return data.trim().slice(0, 500);
  }
  return err instanceof Error ? err.message : String(err);
}

/** The HTTP status of an API error with an answer; null when there was none (network, egress). */
export function apiStatus(err: unknown): number | null {
  return isRequestError(err) && err.response ? err.status : null;
}

export function toForgeError(err: unknown, what: string, secrets: readonly string[]): ForgeError {
  if (err instanceof ForgeError) return err;
  const status = apiStatus(err);
  const cause = isRequestError(err) ? err.cause : err;
  if (cause instanceof EgressDeniedError)
    return new ForgePermissionError(redact(`${what}: ${cause.message}`, secrets), 403);
  const msg = redact(`${what}: GitHub ${status ?? 'unreachable'}: ${apiMessage(err)}`, secrets);
  if (status === null) return new ForgeTransientError(msg, null);
  if (status === 403 && isRequestError(err) && err.response?.headers['retry-after'])
    return new ForgeTransientError(msg, 403);
  if (status === 401 || status === 403) return new ForgePermissionError(msg, status);
  if (status === 404) return new ForgeNotFoundError(msg);
  if (status === 429 || status >= 500) return new ForgeTransientError(msg, status);
  return new ForgeApiError(msg, status);
}
