// The API reference page's pure helpers (web/src/pages/api-docs/openapi-types.ts): operations listed
// by tag and filtered by every word, `$ref`s followed, authentication and schemas put in words
// (unions, nullable, arrays, enums, constants, ranges without zod's safe-integer bounds).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  authOf,
  byTag,
  constraintsOf,
  matchesFilter,
  type OpenApiDoc,
  objectPartsOf,
  operationsOf,
  type Response,
  resolve,
  typeLabel,
} from '../../web/src/pages/api-docs/openapi-types.ts';

const doc: OpenApiDoc = {
  paths: {
    '/api/b': { get: { tags: ['remote'], summary: 'List machines', security: [] } },
    '/api/a/{id}': {
      delete: { tags: ['alerts'], operationId: 'delete_alert', security: [{ sessionCookie: [] }] },
      get: {
        tags: ['alerts'],
        summary: 'One alert',
        security: [{ sessionCookie: [] }, { sessionBearer: [] }],
      },
    },
  },
  components: {
    schemas: { Error: { type: 'object', properties: { error: { type: 'string' } }, required: ['error'] } },
    responses: { NotFound: { $ref: '#/components/responses/Gone' }, Gone: { description: 'gone' } },
    securitySchemes: {
      sessionCookie: { type: 'apiKey', in: 'cookie', name: 'session_token' },
      sessionBearer: { type: 'http', scheme: 'bearer' },
    },
  },
};

test('operations sorted by path and method, grouped by tag, filtered by every word', () => {
  const ops = operationsOf(doc);
  assert.deepEqual(
    ops.map((o) => o.key),
    ['get /api/a/{id}', 'delete /api/a/{id}', 'get /api/b'],
  );
  assert.deepEqual(
    byTag(ops).map(([tag, list]) => [tag, list.length]),
    [
      ['alerts', 2],
      ['remote', 1],
    ],
  );
  const shown = (f: string) => ops.filter((o) => matchesFilter(o, f)).map((o) => o.key);
  assert.deepEqual(
    shown('  '),
    ops.map((o) => o.key),
  );
  assert.deepEqual(shown('GET machines'), ['get /api/b']);
  assert.deepEqual(shown('delete_alert'), ['delete /api/a/{id}']);
  assert.deepEqual(shown('alerts post'), []);
});

test('references are followed; authentication is said in words', () => {
  assert.equal(resolve<Response>(doc, { $ref: '#/components/responses/NotFound' }).description, 'gone');
  assert.deepEqual(resolve(doc, { $ref: '#/components/schemas/Nope' }), {
    $ref: '#/components/schemas/Nope',
  });
  const [get, del, list] = operationsOf(doc);
  assert.equal(authOf(doc, get!.op), 'sessionCookie (cookie session_token), sessionBearer (bearer header)');
  assert.equal(authOf(doc, del!.op), 'sessionCookie (cookie session_token)');
  assert.equal(authOf(doc, list!.op), 'public (no credentials)');
});

test('schemas in words: types, unions, arrays, enums, constants and their limits', () => {
  assert.equal(typeLabel(doc, { type: ['integer', 'null'] }), 'integer | null');
  assert.equal(typeLabel(doc, { anyOf: [{ type: 'string' }, { type: 'null' }] }), 'string | null');
  assert.equal(
    typeLabel(doc, { type: 'array', items: { $ref: '#/components/schemas/Error' } }),
    'array of object',
  );
  assert.equal(typeLabel(doc, { enum: ['daily', 'monthly'] }), 'one of "daily", "monthly"');
  assert.equal(typeLabel(doc, { const: true }), '= true');
  assert.equal(typeLabel(doc, {}), 'any');
  assert.deepEqual(constraintsOf({ type: 'integer', minimum: 1, maximum: 90, default: 7 }), [
    '1..90',
    'default 7',
  ]);
  assert.deepEqual(
    constraintsOf({ type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 }),
    [],
  );
  assert.deepEqual(constraintsOf({ type: 'string', minLength: 1, maxLength: 100, pattern: '^a' }), [
    'min 1 chars',
    'max 100 chars',
    'pattern ^a',
  ]);
  // The object parts of a schema: its own, an array's items, each member of a union.
  const item = { type: 'object', properties: { id: { type: 'integer' } } };
  assert.deepEqual(objectPartsOf(doc, { type: 'array', items: item }), [item]);
  assert.equal(objectPartsOf(doc, { anyOf: [item, { type: 'null' }, item] }).length, 2);
  assert.deepEqual(objectPartsOf(doc, { type: 'string' }), []);
});
