// GET /api/openapi.json (public): the OpenAPI 3.1 document of this API (api/openapi/document.ts).
// Built once per application, on the first request after start-up (the router is complete by then;
// it is not while routes are still being mounted), then served from memory with an ETag.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type Application, Router } from 'express';
import { z } from 'zod';
import type { AppDeps } from '../../services/deps.ts';
import { buildOpenApiDocument } from '../openapi/document.ts';
import { endpoint } from '../openapi/endpoint.ts';

export const OPENAPI_PATH = '/api/openapi.json';

const packageVersion = (): string => {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version?: string;
    };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
};

const openApiDocument = endpoint({
  tags: ['meta'],
  summary: 'This document',
  responses: {
    200: z
      .looseObject({
        openapi: z.string(),
        info: z.looseObject({ title: z.string(), version: z.string() }),
        paths: z.record(z.string(), z.looseObject({})),
        components: z.looseObject({}),
      })
      .meta({ description: 'The OpenAPI 3.1 document of the API' }),
    304: 'Unchanged (If-None-Match)',
  },
  auth: 'public',
});

export function openApiRouter(deps: AppDeps): Router {
  const r = Router();
  const built = new WeakMap<Application, { body: string; etag: string }>();
  r.get(OPENAPI_PATH, openApiDocument, (req, res) => {
    let doc = built.get(req.app);
    if (!doc) {
      const body = JSON.stringify(buildOpenApiDocument(req.app, { version: packageVersion(), deps }));
      doc = { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
      built.set(req.app, doc);
    }
    res.setHeader('cache-control', 'public, max-age=300');
    res.setHeader('etag', doc.etag);
    if (req.headers['if-none-match'] === doc.etag) {
      res.status(304).end();
      return;
    }
    res.type('application/json').send(doc.body);
  });
  return r;
}
