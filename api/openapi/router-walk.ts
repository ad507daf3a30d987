// Lists every endpoint the Express application routes, by walking its router stack (Express 5 /
// router 2: `app.router.stack`, each layer a route, a mounted router or a middleware). The OpenAPI
// document is built from this list, so a routed endpoint can never be missing from it. For each
// endpoint it also collects the handlers that run before it (router-level `use` middlewares whose
// path covers it, then the route's own stack): the document reads the declared schemas
// (api/openapi/endpoint.ts) and the authentication guards from them.
import type { Application } from 'express';

/** Any middleware or handler function of a route. */
export type AnyHandler = (...args: never[]) => unknown;

export interface RoutedEndpoint {
  /** Upper-case HTTP method; 'ALL' for `router.all`. */
  method: string;
  /** The Express path as written (`/api/remote/machines/:id`). */
  path: string;
  /** Middlewares and handlers in the order they run for this endpoint. */
  handlers: AnyHandler[];
}

interface Layer {
  route?: { path: unknown; methods: Record<string, boolean>; stack: Layer[] };
  handle: AnyHandler & { stack?: Layer[] };
  rawPath?: unknown;
}

/** Joins a mount prefix and a path without doubling or dropping the slash. */
function join(prefix: string, p: string): string {
  if (!prefix || prefix === '/') return p;
  if (p === '/' || p === '') return prefix;
  return prefix.replace(/\/$/, '') + (p.startsWith('/') ? p : `/${p}`);
}

/** Whether a `use` layer mounted at `scope` runs for requests to `path` (plain string prefixes). */
function covers(scope: string, path: string): boolean {
  if (scope === '/' || scope === '') return true;
  return path === scope || path.startsWith(scope.endsWith('/') ? scope : `${scope}/`);
}

const pathsOf = (raw: unknown): string[] => {
  if (typeof raw === 'string') return [raw];
  if (Array.isArray(raw)) return raw.flatMap(pathsOf);
  return []; // RegExp paths: none in this API; a test fails if one appears (see unsupportedPaths).
};

export function routedEndpoints(app: Application): {
  endpoints: RoutedEndpoint[];
  unsupportedPaths: string[];
} {
  const endpoints: RoutedEndpoint[] = [];
  const unsupportedPaths: string[] = [];
  const router = (app as unknown as { router: { stack: Layer[] } }).router;

  function walk(stack: Layer[], prefix: string, inherited: { scope: string; fn: AnyHandler }[]) {
    const before = [...inherited];
    for (const layer of stack) {
      if (layer.route) {
        const paths = pathsOf(layer.route.path);
        if (paths.length === 0) unsupportedPaths.push(`${prefix} ${String(layer.route.path)}`);
        for (const p of paths) {
          const full = join(prefix, p);
          const guards = before.filter((b) => covers(b.scope, full)).map((b) => b.fn);
          const own = layer.route.stack.map((l) => l.handle);
          for (const [m, on] of Object.entries(layer.route.methods)) {
            if (!on) continue;
            endpoints.push({
              method: m === '_all' ? 'ALL' : m.toUpperCase(),
              path: full,
              handlers: [...guards, ...own],
            });
          }
        }
        continue;
      }
      const scopes = layer.rawPath === undefined ? ['/'] : pathsOf(layer.rawPath);
      if (scopes.length === 0) {
        unsupportedPaths.push(`${prefix} ${String(layer.rawPath)}`);
        continue;
      }
      for (const scope of scopes) {
        const full = join(prefix, scope);
        if (Array.isArray(layer.handle.stack)) walk(layer.handle.stack, full, before);
        else before.push({ scope: full, fn: layer.handle });
      }
    }
  }
  walk(router.stack, '', []);
  return { endpoints, unsupportedPaths };
}
