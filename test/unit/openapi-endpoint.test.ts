// endpoint() declarations (api/openapi/endpoint.ts) and Express path templates (path-template.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Request } from 'express';
import { z } from 'zod';
import { endpoint, endpointSpecOf } from '../../api/openapi/endpoint.ts';
import { pathTemplates } from '../../api/openapi/path-template.ts';
import { BadRequestError } from '../../domain/errors.ts';

const fakeRequest = (parts: { params?: unknown; query?: unknown; body?: unknown }) =>
  parts as unknown as Request;

test('an endpoint validates each part with its declared schema, once per request, with the 400 naming the field', () => {
  let parses = 0;
  const ep = endpoint({
    params: z.object({ id: z.coerce.number().int().positive() }),
    query: z.object({ limit: z.coerce.number().int().max(10).default(5) }),
    body: z.object({ name: z.string().refine(() => ++parses > 0) }),
  });
  const req = fakeRequest({ params: { id: '7' }, query: {}, body: { name: 'x' } });
  assert.deepEqual(ep.params(req), { id: 7 });
  assert.deepEqual(ep.query(req), { limit: 5 });
  assert.deepEqual(ep.body(req), { name: 'x' });
  assert.deepEqual(ep.body(req), { name: 'x' });
  assert.equal(parses, 1);
  const bad = fakeRequest({ params: { id: '-1' }, query: { limit: '11' }, body: {} });
  assert.throws(
    () => ep.params(bad),
    (e: unknown) => e instanceof BadRequestError && /^id: /.test(e.message),
  );
  assert.throws(
    () => ep.query(bad),
    (e: unknown) => e instanceof BadRequestError && /^limit: /.test(e.message),
  );
  assert.throws(
    () => ep.body(bad),
    (e: unknown) => e instanceof BadRequestError && /^name: /.test(e.message),
  );
  // A missing body parses as {} (as parseInput always did).
  assert.throws(() => ep.body(fakeRequest({})), /name: /);
});

test('reading a part that was not declared is a programming error, not a 400', () => {
  const ep = endpoint({ body: z.object({}) });
  assert.throws(
    () => ep.query(fakeRequest({ query: {} })),
    (e: unknown) => !(e instanceof BadRequestError),
  );
});

test('each declaration parses on its own: a request that reaches two routes is not served a stale parse', () => {
  const a = endpoint({ body: z.object({ n: z.coerce.number() }) });
  const b = endpoint({ body: z.object({ n: z.string() }) });
  const req = fakeRequest({ body: { n: '3' } });
  assert.deepEqual(a.body(req), { n: 3 });
  assert.deepEqual(b.body(req), { n: '3' });
});

test('the declaration travels with the middleware, which only passes the request on', () => {
  const spec = { summary: 's', body: z.object({}) };
  const ep = endpoint(spec);
  assert.equal(endpointSpecOf(ep), spec);
  assert.equal(
    endpointSpecOf(() => undefined),
    undefined,
  );
  let called = false;
  ep(fakeRequest({}), {} as never, () => {
    called = true;
  });
  assert.ok(called);
});

test('Express 5 paths become OpenAPI templates', () => {
  assert.deepEqual(pathTemplates('/api/remote/machines/:id/assign/:uid'), [
    {
      template: '/api/remote/machines/{id}/assign/{uid}',
      params: [
        { name: 'id', wildcard: false },
        { name: 'uid', wildcard: false },
      ],
    },
  ]);
  assert.deepEqual(pathTemplates('/api/remote/agent/files/*path'), [
    { template: '/api/remote/agent/files/{path}', params: [{ name: 'path', wildcard: true }] },
  ]);
  assert.deepEqual(
    pathTemplates('/a{/:b{/:c}}').map((t) => t.template),
    ['/a/{b}/{c}', '/a/{b}', '/a'],
  );
  assert.deepEqual(pathTemplates('/file.json'), [{ template: '/file.json', params: [] }]);
});
