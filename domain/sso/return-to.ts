// Where the browser goes after an SSO login: only a same-origin relative path, so the callback can
// never be turned into an open redirect. Accepted: starts with exactly one `/`, no `//` or `/\` prefix,
// no backslash or control character anywhere, no scheme, at most 500 characters (the column). Pure
// string checks, linear in the input: no regular expression runs on it.
export const MAX_RETURN_TO = 500;
export const DEFAULT_RETURN_TO = '/';

/** The path when safe, otherwise null (the caller refuses with 400). */
export function safeReturnTo(raw: unknown): string | null {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > MAX_RETURN_TO) return null;
  if (raw[0] !== '/' || raw[1] === '/' || raw[1] === '\\') return null;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c < 0x20 || c === 0x7f || c === 0x5c /* \ */) return null;
  }
  // A path that a URL parser resolves to another origin (e.g. "/\t/evil" was refused above) stays
  // on ours: check by resolving against a placeholder origin.
  try {
    const u = new URL(raw, 'http://origin.invalid');
    if (u.origin !== 'http://origin.invalid') return null;
  } catch {
    return null;
  }
  return raw;
}
