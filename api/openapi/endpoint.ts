// One declaration per route of what it takes and what it answers, used both to validate the request
// and to write the OpenAPI document (api/openapi/document.ts): one source.
//
//   const create = endpoint({ summary: 'Create a session', body: createBody, responses: { 201: sessionSchema } });
//   r.post('/api/remote/sessions', auth, create, async (req, res) => {
//     const body = create.body(req);          // parsed by the declared schema, typed
//
// Why a handler in the route's chain rather than a registry keyed by path: the declaration sits on
// the line that routes it, so it cannot drift to another path or method, the router walk
// (router-walk.ts) finds it among the route's handlers, and the route file still reads top to bottom.
// Validation happens where the handler reads a part (`create.body(req)`: parseInput with the
// declared schema, a 400 `{error}` naming the field, parsed once per request), not in the middleware:
// handlers decide their order of refusals (a 404 for a resource the caller may not see comes before
// a 400 on its body), and converting a route to a declaration changes no answer it gives.
import type { Request, RequestHandler } from 'express';
import type { z } from 'zod';
import { parseInput } from '../../domain/validation.ts';
import type { AnyHandler } from './router-walk.ts';

/** How a caller authenticates (the security schemes of the document). */
export type AuthScheme = 'session' | 'agentToken' | 'proxyToken' | 'uploadKey';

export interface EndpointSpec<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  summary?: string;
  description?: string;
  tags?: string[];
  params?: P;
  query?: Q;
  body?: B;
  /** The media types `body` arrives as (default application/json), e.g. a form for a SAML ACS. */
  bodyMediaTypes?: string[];
  /**
   * A body the handler reads itself (a stream; rows judged one by one; a domain parser that picks
   * one of several zod schemas): documented here from the schemas that validate it, never parsed by
   * `body(req)`. Its description says what validates it.
   */
  selfParsedBody?: { content: Record<string, z.ZodType>; description: string; required?: boolean };
  /** Success answers: status -> the body's schema, or a description for non-JSON answers. */
  responses?: Record<number, z.ZodType | string>;
  /** Other media types a success status also answers in, as text (e.g. text/csv when format=csv). */
  alsoAnswers?: Record<number, string[]>;
  /** Error statuses this endpoint answers beyond those implied by its inputs and guards. */
  errors?: number[];
  /** Overrides the authentication read from the route's guards ('public': none). */
  auth?: AuthScheme[] | 'public';
}

type Parsed = { params?: unknown; query?: unknown; body?: unknown };

export const ENDPOINT_SPEC = Symbol.for('svc.openapi.endpoint');

export type Endpoint<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> = RequestHandler & {
  readonly [ENDPOINT_SPEC]: EndpointSpec<z.ZodType, z.ZodType, z.ZodType>;
  params(req: Request): z.infer<P>;
  query(req: Request): z.infer<Q>;
  body(req: Request): z.infer<B>;
};

function read(
  parsedOf: WeakMap<Request, Parsed>,
  req: Request,
  part: keyof Parsed,
  schema: z.ZodType | undefined,
  value: unknown,
): unknown {
  if (!schema) throw new Error(`endpoint: no ${part} schema declared`);
  let parsed = parsedOf.get(req);
  if (!parsed) {
    parsed = {};
    parsedOf.set(req, parsed);
  }
  if (!(part in parsed)) parsed[part] = parseInput(schema, value);
  return parsed[part];
}

export function endpoint<
  P extends z.ZodType = z.ZodNever,
  Q extends z.ZodType = z.ZodNever,
  B extends z.ZodType = z.ZodNever,
>(spec: EndpointSpec<P, Q, B>): Endpoint<P, Q, B> {
  const marker: RequestHandler = (_req, _res, next) => next();
  // Per declaration: a request that falls through to another route (next()) parses afresh there.
  const parsedOf = new WeakMap<Request, Parsed>();
  return Object.assign(marker, {
    [ENDPOINT_SPEC]: spec as EndpointSpec<z.ZodType, z.ZodType, z.ZodType>,
    params: (req: Request) => read(parsedOf, req, 'params', spec.params, req.params) as z.infer<P>,
    query: (req: Request) => read(parsedOf, req, 'query', spec.query, req.query) as z.infer<Q>,
    body: (req: Request) => read(parsedOf, req, 'body', spec.body, req.body) as z.infer<B>,
  });
}

/** The declaration carried by a handler, if it is an endpoint. */
export function endpointSpecOf(fn: AnyHandler): EndpointSpec<z.ZodType, z.ZodType, z.ZodType> | undefined {
  return (fn as Partial<Endpoint<z.ZodType, z.ZodType, z.ZodType>>)[ENDPOINT_SPEC];
}
