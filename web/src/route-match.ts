// Pure helpers of the client router (no DOM): which registry route a path is (for the document title),
// and whether a failed lazy chunk should reload the page once (a redeploy replaced the hashed files
// the open page still asks for).

/** True when `path` matches a preact-iso pattern ("/sessions/:id", "/manage/*"). Linear in both. */
export function matchesPattern(pattern: string, path: string): boolean {
  const p = pattern.split('/').filter(Boolean);
  const s = path.split('?', 1)[0]!.split('/').filter(Boolean);
  for (let i = 0; i < p.length; i++) {
    const seg = p[i]!;
    if (seg === '*') return true;
    if (i >= s.length) return seg.endsWith('?');
    if (!seg.startsWith(':') && seg !== s[i]) return false;
  }
  return p.length === s.length;
}

/** The first route whose pattern matches `path` (exact paths win over patterns). */
export function routeFor<R extends { path: string }>(routes: readonly R[], path: string): R | undefined {
  return routes.find((r) => r.path === path) ?? routes.find((r) => matchesPattern(r.path, path));
}

export const CHUNK_RELOAD_KEY = 'svc:chunk-reload';

/**
 * After a lazy chunk failed to load: reload once per path (the new index.html names the new chunks);
 * a second failure on the same path is shown as an error instead of reloading forever.
 */
export function shouldReloadForChunk(lastReloadedPath: string | null, path: string): boolean {
  return lastReloadedPath !== path;
}
