// The OpenAPI 3.1 document of the whole REST API, built from the real Express router
// (router-walk.ts: every routed endpoint, nothing else) and from the zod schemas that validate each
// route (endpoint.ts, converted with z.toJSONSchema: one source). A route not yet declared with
// `endpoint()` still appears with its method, path, path parameters, authentication and the generic
// error bodies, marked `x-schema: pending`.
//
// Authentication is read from the route's guards: `authenticate(deps)` (any instance: recognised by
// its source text, so this module needs no hook in api/middleware/auth.ts), `requireAdmin`,
// `requireSystemAdmin`, `requirePermission(p)`. Agent, proxy and upload credentials are checked inside
// their handlers, so they are named here by path (AUTH_BY_PATH) unless the endpoint declares `auth`.
// The model proxy is served ahead of Express (api/routes/remote/llm-proxy.ts), so it is added here
// explicitly (OUTSIDE_ROUTER).
import type { Application } from 'express';
import { z } from 'zod';
import type { Permission } from '../../domain/permissions.ts';
import type { AppDeps } from '../../services/deps.ts';
import { authenticate, requireAdmin, requirePermission, requireSystemAdmin } from '../middleware/auth.ts';
import { type AuthScheme, type EndpointSpec, endpointSpecOf } from './endpoint.ts';
import { pathTemplates } from './path-template.ts';
import { type AnyHandler, type RoutedEndpoint, routedEndpoints } from './router-walk.ts';

type Json = Record<string, unknown>;
type AnySpec = EndpointSpec<z.ZodType, z.ZodType, z.ZodType>;

const ERROR_REF = { $ref: '#/components/schemas/Error' };
const STATUS_TEXT: Record<number, [string, string]> = {
  400: ['BadRequest', 'Invalid input: `error` names the field'],
  401: ['Unauthorized', 'Missing, invalid or expired credentials'],
  403: ['Forbidden', 'Authenticated but not allowed (role, permission, tenant, or password change required)'],
  404: ['NotFound', 'No such resource, or not visible to the caller'],
  409: ['Conflict', 'The resource is in a state that refuses the change'],
  413: ['PayloadTooLarge', 'The request body is too large'],
  429: ['TooManyRequests', 'Rate or quota limit reached; see Retry-After when present'],
  503: ['ServiceUnavailable', 'A dependency or feature is unavailable'],
};

const SECURITY_SCHEMES: Json = {
  sessionCookie: {
    type: 'apiKey',
    in: 'cookie',
    name: 'session_token',
    description: 'The session cookie set by POST /api/auth/login or an SSO callback.',
  },
  sessionBearer: {
    type: 'http',
    scheme: 'bearer',
    description: 'The same session token as `Authorization: Bearer <token>` (read when no cookie is sent).',
  },
  sessionQuery: {
    type: 'apiKey',
    in: 'query',
    name: 'token',
    description: 'The same session token as `?token=` (read last; for EventSource clients).',
  },
  agentToken: {
    type: 'http',
    scheme: 'bearer',
    description: 'A machine agent token, returned by POST /api/remote/agent/register.',
  },
  proxyToken: {
    type: 'http',
    scheme: 'bearer',
    description: "A remote session's model-proxy token as `Authorization: Bearer`.",
  },
  proxyTokenHeader: {
    type: 'apiKey',
    in: 'header',
    name: 'x-api-key',
    description:
      'The proxy token as the Anthropic SDK sends it (`x-goog-api-key` and `?key=` also accepted).',
  },
  uploadKey: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Upload-Auth',
    description:
      "A personal upload token (`svcup_...`, POST /api/upload-tokens; rows count for its owner), or the server's shared upload key (SVC_UPLOAD_AUTH_KEY, trusted collectors only). A personal token may also be sent as `Authorization: Bearer`.",
  },
};

const SECURITY: Record<AuthScheme, Json[]> = {
  session: [{ sessionCookie: [] }, { sessionBearer: [] }, { sessionQuery: [] }],
  agentToken: [{ agentToken: [] }],
  proxyToken: [{ proxyToken: [] }, { proxyTokenHeader: [] }],
  uploadKey: [{ uploadKey: [] }],
};

/** Credentials checked inside handlers (not by a guard middleware), by method and Express path. */
const AUTH_BY_PATH: Record<string, AuthScheme> = {
  'POST /api/remote/agent/message': 'agentToken',
  'POST /api/remote/agent/terminals/:terminalId': 'agentToken',
  'POST /api/remote/usage-report': 'agentToken',
  'POST /api/upload/usage': 'uploadKey',
  'POST /api/upload/messages': 'uploadKey',
  'POST /api/upload/batch': 'uploadKey',
};

const PROXY_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
/** Endpoints served before Express dispatches (the model proxy): not in the router stack. */
export const OUTSIDE_ROUTER: { method: string; path: string; spec: AnySpec }[] = [
  ...['/api/remote/llm-proxy', '/api/remote/llm-proxy/*path'].flatMap((path) =>
    (path.endsWith('proxy') ? ['POST'] : PROXY_METHODS).map((method) => ({
      method,
      path,
      spec: {
        summary: 'Model proxy: forwards the call to the provider with the stored key',
        tags: ['remote'],
        auth: ['proxyToken'] as AuthScheme[],
        responses: { 200: 'The provider answer, streamed as the provider sends it' },
        errors: [400, 401, 403, 404, 405, 429, 503],
      } satisfies AnySpec,
    })),
  ),
];

interface Guards {
  session: boolean;
  requirement?: string;
}

function guardReader(deps: AppDeps | undefined) {
  // The source text of any `authenticate(deps)` closure; a build where making one needs more than
  // the deps given recognises none (the document test then fails on its session checks).
  let authSource: string | undefined;
  try {
    authSource = authenticate(deps ?? ({} as AppDeps)).toString();
  } catch {
    authSource = undefined;
  }
  const permissionSource = requirePermission('admin_access' as Permission).toString();
  return (handlers: AnyHandler[]): Guards => {
    const g: Guards = { session: false };
    for (const h of handlers) {
      if (h === requireAdmin) g.requirement = 'administrator (system admin, tenant admin or admin_access)';
      else if (h === requireSystemAdmin) g.requirement = 'system administrator';
      else {
        const src = h.toString();
        if (src === authSource) g.session = true;
        else if (src === permissionSource) g.requirement ??= 'a permission of the caller';
      }
    }
    return g;
  };
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  try {
    const out = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Json;
    delete out.$schema;
    return out;
  } catch (error) {
    return { 'x-unrepresentable': (error as Error).message };
  }
}

/** The model proxy answers errors in the providers' shape: {error: {message, type}} (spec document 1, Errors). */
const PROXY_ERROR_REF = { $ref: '#/components/schemas/ProxyError' };
const proxyErrorResponse = (status: number): Json => ({
  description: STATUS_TEXT[status]?.[1] ?? `Error ${status}`,
  content: { 'application/json': { schema: PROXY_ERROR_REF } },
});

const errorResponse = (status: number): Json =>
  STATUS_TEXT[status]
    ? { $ref: `#/components/responses/${STATUS_TEXT[status]![0]}` }
    : { description: `Error ${status}`, content: { 'application/json': { schema: ERROR_REF } } };

function operationId(method: string, template: string, used: Set<string>): string {
  const words = template
    .split('/')
    .filter((s) => s && s !== 'api')
    .map((s) => (s.startsWith('{') ? `by_${s.slice(1, -1)}` : s))
    .join('_');
  const base = `${method.toLowerCase()}_${words}`.replace(/[^A-Za-z0-9_]/g, '_');
  let id = base;
  for (let n = 2; used.has(id); n++) id = `${base}_${n}`;
  used.add(id);
  return id;
}

function tagOf(template: string): string {
  const parts = template.split('/').filter(Boolean);
  return parts[0] === 'api' ? (parts[1] ?? 'api') : 'ops';
}

export interface OpenApiOptions {
  version: string;
  /** The application's deps (to recognise its `authenticate(deps)` guards). */
  deps?: AppDeps;
  title?: string;
}

/** Builds the document for an application whose routes are all mounted. */
export function buildOpenApiDocument(app: Application, opts: OpenApiOptions): Json {
  const { endpoints, unsupportedPaths } = routedEndpoints(app);
  if (unsupportedPaths.length)
    throw new Error(`openapi: unsupported route paths: ${unsupportedPaths.join(', ')}`);
  const readGuards = guardReader(opts.deps);
  const paths: Record<string, Json> = {};
  const usedIds = new Set<string>();

  const add = (e: RoutedEndpoint, declared: AnySpec | undefined, outsideRouter: boolean) => {
    const guards = readGuards(e.handlers);
    const auth: AuthScheme[] =
      declared?.auth === 'public'
        ? []
        : (declared?.auth ??
          (guards.session
            ? ['session']
            : AUTH_BY_PATH[`${e.method} ${e.path}`]
              ? [AUTH_BY_PATH[`${e.method} ${e.path}`]!]
              : []));
    const methods = e.method === 'ALL' ? PROXY_METHODS : [e.method];
    for (const variant of pathTemplates(e.path)) {
      paths[variant.template] ??= {};
      const item = paths[variant.template]!;
      const paramShapes = declared?.params ? jsonSchema(declared.params, 'input') : undefined;
      const paramProps = (paramShapes?.properties ?? {}) as Record<string, Json>;
      const parameters: Json[] = variant.params.map((p) => ({
        name: p.name,
        in: 'path',
        required: true,
        schema: paramProps[p.name] ?? { type: 'string' },
        ...(p.wildcard ? { description: 'One or more path segments', 'x-wildcard': true } : {}),
      }));
      if (declared?.query) {
        const q = jsonSchema(declared.query, 'input');
        const required = new Set((q.required as string[] | undefined) ?? []);
        for (const [name, schema] of Object.entries((q.properties ?? {}) as Record<string, Json>))
          parameters.push({ name, in: 'query', required: required.has(name), schema });
      }
      const statuses = new Set<number>(declared?.errors ?? []);
      if (!declared || declared.params || declared.query || declared.body || declared.selfParsedBody)
        statuses.add(400);
      if (auth.length) statuses.add(401);
      if (auth.includes('session') || guards.requirement) statuses.add(403);
      if (variant.params.length || !declared) statuses.add(404);
      if (!declared) for (const s of [409, 429]) statuses.add(s);
      const responses: Json = {};
      const success = declared?.responses ?? { 200: 'Success (response schema pending)' };
      for (const [status, r] of Object.entries(success))
        responses[status] =
          typeof r === 'string'
            ? { description: r }
            : {
                description: 'Success',
                content: { 'application/json': { schema: jsonSchema(r, 'output') } },
              };
      for (const [status, types] of Object.entries(declared?.alsoAnswers ?? {})) {
        const r: Json = (responses[status] as Json | undefined) ?? { description: 'Success' };
        const content: Json = (r.content as Json | undefined) ?? {};
        for (const type of types) content[type] = { schema: { type: 'string' } };
        responses[status] = { ...r, content };
      }
      for (const s of [...statuses].sort())
        responses[String(s)] ??= outsideRouter ? proxyErrorResponse(s) : errorResponse(s);
      for (const m of methods) {
        const op: Json = {
          operationId: operationId(m, variant.template, usedIds),
          tags: declared?.tags ?? [tagOf(variant.template)],
          ...(declared?.summary ? { summary: declared.summary } : {}),
          ...(declared?.description ? { description: declared.description } : {}),
          security: auth.flatMap((a) => SECURITY[a]),
          ...(parameters.length ? { parameters } : {}),
          responses,
          ...(declared ? {} : { 'x-schema': 'pending' }),
          ...(declared && !declared.responses ? { 'x-response-schema': 'pending' } : {}),
          ...(guards.requirement ? { 'x-requires': guards.requirement } : {}),
          ...(outsideRouter ? { 'x-outside-router': true } : {}),
          'x-express-path': e.path,
        };
        if (declared?.body && m !== 'GET' && m !== 'DELETE') {
          const schema = jsonSchema(declared.body, 'input');
          // An absent body is read as {} (parseInput): required only when some field is.
          const required = Array.isArray(schema.required) && schema.required.length > 0;
          const content: Json = {};
          for (const type of declared.bodyMediaTypes ?? ['application/json']) content[type] = { schema };
          op.requestBody = { required, content };
        } else if (declared?.selfParsedBody) {
          const content: Json = {};
          for (const [type, s] of Object.entries(declared.selfParsedBody.content))
            content[type] = { schema: jsonSchema(s, 'input') };
          op.requestBody = {
            required: declared.selfParsedBody.required ?? true,
            description: declared.selfParsedBody.description,
            content,
          };
        }
        item[m.toLowerCase()] = op;
      }
    }
  };

  for (const e of endpoints) add(e, e.handlers.map(endpointSpecOf).find(Boolean), false);
  for (const o of OUTSIDE_ROUTER) add({ method: o.method, path: o.path, handlers: [] }, o.spec, true);

  const responses: Json = {};
  for (const [, [name, description]] of Object.entries(STATUS_TEXT))
    responses[name] = { description, content: { 'application/json': { schema: ERROR_REF } } };

  const sortedPaths: Record<string, Json> = {};
  for (const p of Object.keys(paths).sort()) sortedPaths[p] = paths[p]!;
  return {
    openapi: '3.1.0',
    info: { title: opts.title ?? 'AI assistant governance platform API', version: opts.version },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    paths: sortedPaths,
    components: {
      schemas: {
        ProxyError: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['message', 'type'],
              properties: { message: { type: 'string' }, type: { type: 'string' } },
              additionalProperties: true,
            },
          },
          additionalProperties: true,
          description: 'Errors of the model proxy, in the shape the provider SDKs read',
        },
        Error: {
          type: 'object',
          required: ['error'],
          properties: { error: { type: 'string', description: 'A human sentence' } },
          additionalProperties: true,
          description: 'Every error body; some errors add fields the spec names (e.g. must_change_password).',
        },
      },
      responses,
      securitySchemes: SECURITY_SCHEMES,
    },
  };
}
