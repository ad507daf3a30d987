/**
 * The path a caller sent below the proxy prefix, decoded and normalised ONCE, so that the endpoint
 * allow-list (endpoints.ts) and the upstream request see the same thing. Anything ambiguous is
 * refused rather than guessed at, because a path that one side reads differently from the other is
 * how an unmetered call gets through (`/v1/chat/completion%73`, `/v1/x/..%2Fchat/completions`):
 *
 * - `\`, `;` and `#` anywhere in the path (literal or percent-encoded): servers disagree on them
 *   (backslash as slash, `;` path parameters, fragments).
 * - encoded `/`, `?` or `%` (`%2F`, `%3F`, `%25`: a second decoding layer upstream would change the
 *   path again), and bytes outside printable ASCII, literal or encoded.
 * - empty segments (`//`, a trailing `/`) and dot segments (`.`, `..`, also as `%2e`).
 * - malformed percent-encoding.
 *
 * One pass over the characters, no regular expression: linear in the input whatever it holds.
 */

export interface ProxyPath {
  /** Decoded segments, never empty strings; [] for the bare proxy endpoint. */
  segments: string[];
  /** The query string without '?', as sent (not decoded: only the upstream reads it). */
  query: string;
}

export type ProxyPathResult = { ok: true; path: ProxyPath } | { ok: false; message: string };

/** Longest path (before the query) the proxy considers; real endpoints are far shorter. */
export const MAX_PROXY_PATH_CHARS = 2048;
/** More segments than any allowed endpoint has: such a path cannot match, refused early. */
const MAX_SEGMENTS = 16;

const refused = (message: string): ProxyPathResult => ({ ok: false, message });

/** `raw` is what follows the proxy prefix in the request target: '', '/', '/v1/x?y=z', ... */
export function normaliseProxyPath(raw: string): ProxyPathResult {
  const q = raw.indexOf('?');
  const pathPart = q === -1 ? raw : raw.slice(0, q);
  const query = q === -1 ? '' : raw.slice(q + 1);
  if (query.includes('#')) return refused('Path must not contain "#"');
  if (pathPart === '' || pathPart === '/') return { ok: true, path: { segments: [], query } };
  if (pathPart.charCodeAt(0) !== SLASH) return refused('Path must start with "/"');
  if (pathPart.length > MAX_PROXY_PATH_CHARS) return refused('Path is too long');

  const segments: string[] = [];
  let current = '';
  for (let i = 1; i <= pathPart.length; i++) {
    if (i === pathPart.length || pathPart.charCodeAt(i) === SLASH) {
      if (current === '') return refused('Path must not contain empty segments ("//" or a trailing "/")');
      if (current === '.' || current === '..') return refused('Path must not contain dot segments');
      if (segments.length === MAX_SEGMENTS) return refused('Path has too many segments');
      segments.push(current);
      current = '';
      continue;
    }
    let code = pathPart.charCodeAt(i);
    if (code === PERCENT) {
      const hi = hexValue(pathPart.charCodeAt(i + 1));
      const lo = hexValue(pathPart.charCodeAt(i + 2));
      if (hi < 0 || lo < 0) return refused('Path has malformed percent-encoding');
      code = hi * 16 + lo;
      i += 2;
      if (code === SLASH || code === QUESTION || code === PERCENT)
        return refused('Path must not contain encoded "/", "?" or "%"');
    }
    if (code === BACKSLASH || code === SEMICOLON || code === HASH)
      return refused('Path must not contain "\\", ";" or "#"');
    if (code < 0x21 || code > 0x7e) return refused('Path must contain printable ASCII only');
    current += String.fromCharCode(code);
  }
  return { ok: true, path: { segments, query } };
}

/** The normalised path as it is sent upstream: only printable ASCII without `%`, so no re-encoding. */
export function formatProxyPath(path: ProxyPath): string {
  const p = path.segments.length === 0 ? '' : `/${path.segments.join('/')}`;
  return path.query === '' ? p : `${p}?${path.query}`;
}

const SLASH = 0x2f;
const PERCENT = 0x25;
const QUESTION = 0x3f;
const BACKSLASH = 0x5c;
const SEMICOLON = 0x3b;
const HASH = 0x23;

function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x41 && code <= 0x46) return code - 0x37;
  if (code >= 0x61 && code <= 0x66) return code - 0x57;
  return -1; // also NaN past the end
}
