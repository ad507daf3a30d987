// GET /api/openapi.json against the real server: public and cacheable; valid OpenAPI 3.1 by the
// structural rules that matter (test/support/openapi-structure.ts) with every schema a valid JSON
// Schema 2020-12; the same set of endpoints as the route files declare (scanned from their source
// text, independently of the router walk that builds the document) and as the server answers over
// HTTP; every endpoint of the specification (openapi-spec-endpoints.txt, a copy of
// spec/endpoints.txt); converted routes carry the zod schema that also validates them.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import express from 'express';
import { z } from 'zod';
import { buildOpenApiDocument } from '../../api/openapi/document.ts';
import { endpoint } from '../../api/openapi/endpoint.ts';
import { ADMIN, startTestApp, type TestApp } from '../support/harness.ts';
import { openApiProblems, schemasOf } from '../support/openapi-structure.ts';
import { registerBody, registrationToken } from '../support/remote.ts';
import { login } from '../support/session.ts';

type Json = Record<string, any>;
const ROUTES_DIR = path.resolve('api/routes');
const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** `METHOD /template` of every operation, with path parameter names erased (`/x/{}`). */
function operationsOf(doc: Json): Set<string> {
  const out = new Set<string>();
  for (const [template, item] of Object.entries<Json>(doc.paths))
    for (const m of Object.keys(item))
      if (HTTP_METHODS.includes(m)) out.add(`${m.toUpperCase()} ${erase(template)}`);
  return out;
}
const erase = (template: string) => template.replace(/\{[^}/]*\}/g, '{}');
/** Express path (`:id`, `*path`) -> erased template. Source paths of this API have no optional groups. */
const expressToErased = (p: string) => p.replace(/[:*][A-Za-z0-9_$]+/g, '{}');

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory()
      ? filesUnder(path.join(dir, d.name))
      : d.name.endsWith('.ts')
        ? [path.join(dir, d.name)]
        : [],
  );
}

/**
 * The routes the source declares: `r.get('/x', ...)`, `router.post(CONST, ...)` (a string or array
 * constant of the same file), `` r.post(`${CONST}/:id`) `` and `` r.post(`/a/${loopVariable}/b`) ``
 * (a variable that is not a constant of the file stands for one segment, `*`), prefixed by the mount
 * path api/routes/index.ts gives the router. Each route is `METHOD /erased/{}/template`.
 */
function sourceRoutes(): { routes: Set<string>; unresolved: string[] } {
  const index = readFileSync(path.join(ROUTES_DIR, 'index.ts'), 'utf8');
  const fileOfRouter = new Map<string, string>();
  for (const m of index.matchAll(/import \{ (\w+) \} from '(\.[^']+)'/g))
    fileOfRouter.set(m[1]!, path.join(ROUTES_DIR, m[2]!));
  const prefixOfFile = new Map<string, string>();
  for (const m of index.matchAll(/app\.use\('([^']+)', (\w+)\(/g))
    prefixOfFile.set(fileOfRouter.get(m[2]!)!, m[1]!);

  const routes = new Set<string>();
  const unresolved: string[] = [];
  for (const file of filesUnder(ROUTES_DIR)) {
    const src = readFileSync(file, 'utf8');
    const constants = new Map<string, string[]>();
    for (const m of src.matchAll(/const ([A-Z_][A-Z0-9_]*) = ('[^']*'|\[[^\]]*\])/g))
      constants.set(
        m[1]!,
        [...m[2]!.matchAll(/'([^']*)'/g)].map((s) => s[1]!),
      );
    const prefix = prefixOfFile.get(file) ?? '';
    const calls = src.matchAll(
      /\b(?:r|router)\.(get|post|put|patch|delete|all)\(\s*(?:'([^']*)'|`([^`]*)`|([A-Z_][A-Z0-9_]*)\b)/g,
    );
    for (const m of calls) {
      let paths: string[] | undefined;
      if (m[2] !== undefined) paths = [m[2]];
      else if (m[3] !== undefined)
        paths = [m[3].replace(/\$\{(\w+)\}/g, (_, name: string) => constants.get(name)?.[0] ?? '*')];
      else paths = constants.get(m[4]!);
      if (!paths) {
        unresolved.push(`${path.relative(ROUTES_DIR, file)}: ${m[0]}`);
        continue;
      }
      for (const p of paths) {
        const full = prefix && p === '/' ? prefix : prefix + p;
        routes.add(`${m[1]!.toUpperCase()} ${expressToErased(full)}`);
      }
    }
  }
  return { routes, unresolved };
}

/** Whether a scanned route (`*` = any one segment) matches a documented operation. */
function matches(route: string, operation: string): boolean {
  const a = route.split('/');
  const b = operation.split('/');
  return a.length === b.length && a.every((seg, i) => seg === b[i] || (seg === '*' && b[i] !== '{}'));
}

describe('OpenAPI document', () => {
  let app: TestApp;
  let doc: Json;
  let etag: string;
  before(async () => {
    app = await startTestApp();
    const res = await fetch(`${app.url}/api/openapi.json`);
    assert.equal(res.status, 200);
    etag = res.headers.get('etag') ?? '';
    doc = (await res.json()) as Json;
  });
  after(() => app.close());

  test('is public and cacheable: the same document with an ETag, 304 when unchanged', async () => {
    const res = await fetch(`${app.url}/api/openapi.json`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /application\/json/);
    assert.match(res.headers.get('cache-control') ?? '', /public/);
    assert.ok(etag.length > 2);
    assert.equal(res.headers.get('etag'), etag);
    assert.deepEqual(await res.json(), doc);
    const again = await fetch(`${app.url}/api/openapi.json`, { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
    // A session changes nothing (public document, not per user).
    const s = await login(app.url, ADMIN.username, ADMIN.password);
    const withSession = await fetch(`${app.url}/api/openapi.json`, { headers: s.headers });
    assert.deepEqual(await withSession.json(), doc);
  });

  test('is OpenAPI 3.1 by the structural rules, with auth schemes and the error body', () => {
    assert.deepEqual(openApiProblems(doc), []);
    assert.equal(doc.openapi, '3.1.0');
    const schemes = doc.components.securitySchemes;
    assert.deepEqual(schemes.sessionCookie, {
      type: 'apiKey',
      in: 'cookie',
      name: 'session_token',
      description: schemes.sessionCookie.description,
    });
    for (const name of [
      'sessionBearer',
      'sessionQuery',
      'agentToken',
      'proxyToken',
      'proxyTokenHeader',
      'uploadKey',
    ])
      assert.ok(schemes[name], name);
    assert.deepEqual(doc.components.schemas.Error.required, ['error']);
    for (const [name, status] of [
      ['BadRequest', 400],
      ['Unauthorized', 401],
      ['Forbidden', 403],
      ['NotFound', 404],
      ['Conflict', 409],
      ['TooManyRequests', 429],
    ] as const)
      assert.equal(
        doc.components.responses[name].content['application/json'].schema.$ref,
        '#/components/schemas/Error',
        `${name} (${status})`,
      );
  });

  test('the structural check fails on a broken document', () => {
    const broken = structuredClone(doc);
    broken.paths['/api/remote/machines/{id}'].get.parameters = [];
    broken.paths['/api/auth/login'].post.responses['400'] = { $ref: '#/components/responses/Nope' };
    broken.paths['/api/auth/me'].get.security = [{ nobody: [] }];
    const problems = openApiProblems(broken).join('\n');
    assert.match(problems, /GET \/api\/remote\/machines\/\{id\}: template parameter \{id\} is not declared/);
    assert.match(problems, /\$ref #\/components\/responses\/Nope does not resolve/);
    assert.match(problems, /security scheme nobody is not declared/);
  });

  test('every schema in it is a valid JSON Schema 2020-12', () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    const bad: string[] = [];
    const all = schemasOf(doc);
    assert.ok(all.length > 50, `only ${all.length} schemas`);
    for (const { at, schema } of all) {
      if (schema.$ref) continue;
      try {
        ajv.compile(schema);
      } catch (error) {
        bad.push(`${at}: ${(error as Error).message}`);
      }
    }
    assert.deepEqual(bad, []);
  });

  test('documents exactly the routes the route files declare', () => {
    const { routes, unresolved } = sourceRoutes();
    assert.deepEqual(unresolved, [], 'route paths the scan cannot read: name them as constants or literals');
    assert.ok(routes.size > 150, `only ${routes.size} routes scanned`);
    const documented = operationsOf(doc);
    const outside = new Set<string>();
    for (const [template, item] of Object.entries<Json>(doc.paths))
      for (const [m, op] of Object.entries<Json>(item))
        if (op['x-outside-router']) outside.add(`${m.toUpperCase()} ${erase(template)}`);
    const missing = [...routes].filter((r) => ![...documented].some((d) => matches(r, d)));
    const unrouted = [...documented].filter(
      (d) => !outside.has(d) && ![...routes].some((r) => matches(r, d)),
    );
    assert.deepEqual(missing, [], 'routed but not documented');
    assert.deepEqual(unrouted, [], 'documented but not routed');
  });

  test('every documented operation is answered by a route, not by the unknown-route handler', async () => {
    const unknown = await fetch(`${app.url}/api/no-such-route-${Date.now()}`);
    const unknownBody = await unknown.text();
    assert.equal(unknown.status, 404);
    const unanswered: string[] = [];
    for (const [template, item] of Object.entries<Json>(doc.paths))
      for (const m of Object.keys(item)) {
        if (!HTTP_METHODS.includes(m)) continue;
        const url = app.url + template.replace(/\{[^}/]*\}/g, '1');
        const stream = template.endsWith('/stream');
        const ac = new AbortController();
        const res = await fetch(url, {
          method: m.toUpperCase(),
          headers: m === 'get' || m === 'delete' ? {} : { 'content-type': 'application/json' },
          body: m === 'get' || m === 'delete' ? undefined : '{}',
          redirect: 'manual',
          signal: ac.signal,
        });
        const text = stream && res.status === 200 ? '' : await res.text();
        ac.abort();
        if (res.status === 404 && text === unknownBody) unanswered.push(`${m.toUpperCase()} ${template}`);
      }
    assert.deepEqual(unanswered, []);
  });

  test('contains every endpoint of the specification', () => {
    const documented = operationsOf(doc);
    const lines = readFileSync(path.resolve('test/integration/openapi-spec-endpoints.txt'), 'utf8')
      .split('\n')
      .filter((l) => l && !l.startsWith('#'));
    assert.ok(lines.length > 150);
    const missing: string[] = [];
    for (const line of lines) {
      const [, , method, p] = line.split('|') as [string, string, string, string];
      const erased = expressToErased(p.replace(/<[^>]+>/g, '{}'));
      const methods = method === 'ANY' ? ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] : [method];
      for (const m of methods) if (!documented.has(`${m} ${erased}`)) missing.push(`${m} ${p}`);
    }
    assert.deepEqual(missing, []);
  });

  test('authentication per operation: session guards, agent, proxy and upload credentials, public', () => {
    const securityOf = (m: string, p: string) =>
      (doc.paths[p][m].security as Json[]).flatMap((s) => Object.keys(s)).sort();
    assert.deepEqual(securityOf('post', '/api/auth/login'), []);
    assert.deepEqual(securityOf('get', '/api/auth/check'), []);
    assert.deepEqual(securityOf('get', '/api/auth/me'), ['sessionBearer', 'sessionCookie', 'sessionQuery']);
    // A router-level guard (`r.use('/api/autonomous', authenticate(deps))`) covers the routes after it.
    assert.deepEqual(securityOf('get', '/api/autonomous/workflows'), [
      'sessionBearer',
      'sessionCookie',
      'sessionQuery',
    ]);
    assert.deepEqual(securityOf('post', '/api/remote/agent/message'), ['agentToken']);
    assert.deepEqual(securityOf('post', '/api/remote/llm-proxy'), ['proxyToken', 'proxyTokenHeader']);
    assert.deepEqual(securityOf('post', '/api/upload/usage'), ['uploadKey']);
    assert.equal(doc.paths['/api/tenants'].post['x-requires'], 'system administrator');
    assert.ok(doc.paths['/api/auth/me'].get.responses['401']);
    assert.equal(doc.paths['/api/auth/check'].get.responses['401'], undefined);
    assert.ok(doc.paths['/api/auth/login'].post.responses['429']);
  });

  test('a converted route documents the zod schema that validates it; others are marked pending', async (t) => {
    const op = doc.paths['/api/auth/login'].post;
    assert.equal(op['x-schema'], undefined);
    const body = op.requestBody.content['application/json'].schema;
    assert.deepEqual(body.required.sort(), ['password', 'username']);
    assert.equal(body.properties.username.type, 'string');
    assert.ok(op.responses['200'].content['application/json'].schema.properties.user);
    // The same declaration validates: its message comes back as the 400 error.
    const res = await fetch(`${app.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'x' }),
    });
    assert.equal(res.status, 400);
    assert.deepEqual(await res.json(), { error: 'password: Username and password are required' });
    const pending = Object.values<Json>(doc.paths).flatMap((item) =>
      Object.values<Json>(item).filter((o) => o['x-schema'] === 'pending'),
    );
    const total = Object.values<Json>(doc.paths).flatMap((item) => Object.keys(item)).length;
    t.diagnostic(`operations ${total}, declared ${total - pending.length}, pending ${pending.length}`);
    t.diagnostic(`pending: ${pending.map((o) => o.operationId).join(' ')}`);
    for (const o of pending) {
      assert.ok(o.responses['400'] && o.responses['404'], o.operationId);
      assert.equal(o.requestBody, undefined);
    }
  });

  test('converted operations answer what they document (GET, no path parameters, as admin)', async () => {
    const s = await login(app.url, ADMIN.username, ADMIN.password);
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    // A machine, so that the remote lists have a row to check; its registration answer is checked too.
    const token = await registrationToken(app.url, s, s.user.tenant_id ?? 1);
    const reg = await fetch(`${app.url}/api/remote/agent/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(registerBody(token)),
    });
    assert.equal(reg.status, 201);
    const regSchema =
      doc.paths['/api/remote/agent/register'].post.responses['201'].content['application/json'].schema;
    assert.ok(ajv.validate(regSchema, await reg.json()), ajv.errorsText());
    const checked: string[] = [];
    const broken: string[] = [];
    for (const [template, item] of Object.entries<Json>(doc.paths)) {
      const op = item.get;
      if (!op || op['x-schema'] || template.includes('{') || template.endsWith('/stream')) continue;
      const schema = op.responses['200']?.content?.['application/json']?.schema;
      if (!schema) continue;
      const res = await fetch(app.url + template, { headers: s.headers });
      const body = await res.json();
      checked.push(template);
      if (res.status !== 200) broken.push(`${template}: ${res.status} ${JSON.stringify(body)}`);
      else if (!ajv.validate(schema, body))
        broken.push(`${template}: ${ajv.errorsText()} in ${JSON.stringify(body)}`);
    }
    for (const p of ['/api/auth/me', '/api/admin/users', '/api/remote/machines', '/api/remote/sessions'])
      assert.ok(checked.includes(p), `${p} not checked: ${checked.join(', ')}`);
    assert.deepEqual(broken, []);
  });

  test('the document holds no secret of the server', () => {
    const text = JSON.stringify(doc);
    for (const secret of [app.settings.SVC_ENCRYPTION_KEY, app.settings.SVC_UPLOAD_AUTH_KEY])
      if (secret) assert.ok(!text.includes(secret));
  });
});

describe('router walk', () => {
  test('a route added to any router appears, with the path its mount gives and its declared schemas', () => {
    const app = express();
    const inner = express.Router();
    const declared = endpoint({
      params: z.object({ id: z.coerce.number().int() }),
      query: z.object({ q: z.string().max(5) }),
      body: z.object({ name: z.string() }),
      responses: { 201: z.object({ ok: z.boolean() }) },
    });
    inner.put('/things/:id', declared, (_req, res) => res.end());
    inner.get('/files/*rest', (_req, res) => res.end());
    inner.get('/opt{/:part}', (_req, res) => res.end());
    app.use('/api/mounted', inner);
    const d = buildOpenApiDocument(app, { version: 't' });
    assert.deepEqual(openApiProblems(d), []);
    assert.deepEqual(Object.keys(d.paths as Json).sort(), [
      '/api/mounted/files/{rest}',
      '/api/mounted/opt',
      '/api/mounted/opt/{part}',
      '/api/mounted/things/{id}',
      '/api/remote/llm-proxy',
      '/api/remote/llm-proxy/{path}',
    ]);
    const put = (d.paths as Json)['/api/mounted/things/{id}'].put;
    assert.equal(put.parameters[0].schema.type, 'integer');
    assert.deepEqual(put.parameters[1], {
      name: 'q',
      in: 'query',
      required: true,
      schema: { type: 'string', maxLength: 5 },
    });
    assert.equal(put.requestBody.content['application/json'].schema.properties.name.type, 'string');
    assert.ok(put.responses['201'].content['application/json'].schema.properties.ok);
    assert.ok(put.responses['400']);
  });
});
