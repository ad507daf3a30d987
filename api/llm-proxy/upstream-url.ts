/**
 * Where a proxied call goes: the stored provider base URL joined with the path the caller used below
 * the proxy prefix.
 */

export interface UpstreamTarget {
  protocol: 'http:' | 'https:';
  hostname: string;
  port: number;
  /** Path and query to request. */
  path: string;
}

/** The base URL or the caller's path cannot be used; `reason` is safe to show the caller. */
export class UpstreamUrlError extends Error {
  override name = 'UpstreamUrlError';
  constructor(
    message: string,
    readonly kind: 'bad_base' | 'bad_path',
  ) {
    super(message);
  }
}

/** A version segment such as /v1 or /v1beta, which both a base URL and a client path may carry. */
const VERSION_SEGMENT = /^\/v\d+(?:alpha|beta)?\d*$/;
/** `.` / `..` segments, literal or percent-encoded: never let a caller walk out of the base path. */
const DOT_SEGMENT = /(?:^|\/)(?:\.|%2e){1,2}(?:\/|$)/i;

/** A provider base URL taken apart once; there are only a few, and each is used for every call. */
interface ParsedBase {
  protocol: 'http:' | 'https:';
  hostname: string;
  port: number;
  /** Path without trailing slashes. */
  path: string;
  /** Query without '?'. */
  query: string;
  /** The base path's last segment when it is a version segment (`/v1`), else undefined. */
  versionSegment: string | undefined;
}

const MAX_CACHED_BASES = 256;
const parsedBases = new Map<string, ParsedBase>();

/**
 * Joins base and path. If the base ends in a version segment and the path starts with the same one
 * (base `https://api.openai.com/v1`, path `/v1/chat/completions`), the segment is used once, so that
 * CLIs configured either way reach the same endpoint. A `key` query parameter (Gemini's way of passing
 * a key in the URL) is removed: it can only be the caller's proxy token.
 */
export function buildUpstreamUrl(upstreamBase: string, path: string): UpstreamTarget {
  const base = parseBase(upstreamBase);

  const queryStart = path.indexOf('?');
  let pathname = queryStart === -1 ? path : path.slice(0, queryStart);
  let query = queryStart === -1 ? '' : path.slice(queryStart + 1);
  // An empty path (the bare `POST /api/remote/llm-proxy`) means the base URL itself.
  const bare = pathname === '';
  if (!pathname.startsWith('/')) pathname = `/${pathname}`;
  if (DOT_SEGMENT.test(pathname))
    throw new UpstreamUrlError('Path must not contain dot segments', 'bad_path');

  const version = base.versionSegment;
  if (version !== undefined && (pathname === version || pathname.startsWith(`${version}/`))) {
    pathname = pathname.slice(version.length) || '/';
  }

  if (query.includes('key=')) {
    const params = new URLSearchParams(query);
    params.delete('key');
    query = params.toString();
  }
  // The base URL's own query (rare: e.g. an Azure api-version) comes first.
  const fullQuery = base.query && query ? `${base.query}&${query}` : base.query || query;

  return {
    protocol: base.protocol,
    hostname: base.hostname,
    port: base.port,
    path: `${bare ? base.path || '/' : `${base.path}${pathname}`}${fullQuery ? `?${fullQuery}` : ''}`,
  };
}

function parseBase(upstreamBase: string): ParsedBase {
  const cached = parsedBases.get(upstreamBase);
  if (cached !== undefined) return cached;

  let url: URL;
  try {
    url = new URL(upstreamBase);
  } catch {
    throw new UpstreamUrlError('Provider base URL is not a valid URL', 'bad_base');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UpstreamUrlError('Provider base URL must be http or https', 'bad_base');
  }
  const path = withoutTrailingSlashes(url.pathname);
  const lastSegment = path.slice(path.lastIndexOf('/'));
  const parsed: ParsedBase = {
    protocol: url.protocol,
    // URL keeps IPv6 literals bracketed; the HTTP client wants them bare.
    hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80,
    path,
    query: url.search.slice(1),
    versionSegment: VERSION_SEGMENT.test(lastSegment) ? lastSegment : undefined,
  };
  if (parsedBases.size >= MAX_CACHED_BASES) parsedBases.clear();
  parsedBases.set(upstreamBase, parsed);
  return parsed;
}

/** A loop, not /\/+$/ (which rescans a run of slashes from every position: quadratic). */
function withoutTrailingSlashes(path: string): string {
  let end = path.length;
  while (end > 0 && path.charCodeAt(end - 1) === 0x2f) end--;
  return path.slice(0, end);
}
