// The write-time check of a stored key's base_url, used by both key endpoints (/api/api-keys and the
// system-admin vault /api/remote/api-keys): the shape rules (domain/egress/base-url.ts), then, for a
// key written by a tenant administrator, its host's addresses. A name that does not resolve now (or
// not in time) is accepted: the proxy checks it again on every new connection (guard.ts), which is
// the check that counts.
import { checkBaseUrlShape, type KeyWriter } from '../../domain/egress/base-url.ts';
import { BadRequestError } from '../../domain/errors.ts';
import { EgressDeniedError, egressGuardFor } from './guard.ts';

/** How long the write-time lookup may take before the name is accepted unchecked. */
const WRITE_LOOKUP_TIMEOUT_MS = 3_000;

export interface CheckedBaseUrl {
  /** The URL to store (normalised), or null for "the provider's default". */
  url: string | null;
  /** The host named in the audit record (null without a base_url). */
  host: string | null;
}

/** Throws BadRequestError with a sentence for the caller; `null`/`''` means no base_url. */
export async function checkKeyBaseUrl(
  raw: string | null | undefined,
  writer: KeyWriter,
  settings: { egress: { allow_hosts: readonly string[] } },
): Promise<CheckedBaseUrl> {
  if (raw === undefined || raw === null || raw.trim() === '') return { url: null, host: null };
  const shape = checkBaseUrlShape(raw.trim(), writer, settings.egress.allow_hosts);
  if (!shape.ok) throw new BadRequestError(shape.message);
  if (shape.resolve) {
    try {
      await withTimeout(egressGuardFor(settings).resolve(shape.host), WRITE_LOOKUP_TIMEOUT_MS);
    } catch (error) {
      if (error instanceof EgressDeniedError) throw new BadRequestError(error.message);
      // Not resolvable now: accepted, checked again at connect time.
    }
  }
  return { url: shape.url, host: shape.host };
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('lookup timed out')), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
