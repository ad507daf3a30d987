// GET /api/openapi.json against the real server: public and cacheable; valid OpenAPI 3.1 by the
// structural rules that matter (test/support/openapi-structure.ts) with every schema a valid JSON
// Schema 2020-12; the same set of endpoints as the route files declare (scanned from their source
// text, independently of the router walk that builds the document) and as the server answers over
// HTTP; every endpoint of the specification (openapi-spec-endpoints.txt, a copy of
// spec/endpoints.txt); converted routes carry the zod schema that also validates them.
// store-independent: the OpenAPI document and the routes it describes
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import express from 'express';
import { z } from 'zod';
import { buildOpenApiDocument } from '../../api/openapi/document.ts';
import { endpoint } from '../../api/openapi/endpoint.ts';
import { tenantProjectRoot } from '../../services/autonomous/projects.ts';
import { makeGitRepo } from '../fixtures/git-repo.ts';
import { createUser } from '../support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../support/harness.ts';
import { openApiProblems, schemasOf } from '../support/openapi-structure.ts';
import { agentMessage, registerBody, registrationToken } from '../support/remote.ts';
import { api, login } from '../support/session.ts';
import { FAKE_CLI_PATHS } from './autonomous/runner-support.ts';

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
  let projects: string;
  before(async () => {
    // A project root: the test puts a Git repository in its tenant's folder, so that an autonomous
    // workflow can be created.
    projects = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'svc-openapi-projects-')));
    app = await startTestApp({
      worker: true,
      env: {
        SVC_AUTONOMOUS_PROJECT_ROOTS: projects,
        SVC_AUTONOMOUS__CLI_PATHS: JSON.stringify(FAKE_CLI_PATHS),
      },
    });
    const res = await fetch(`${app.url}/api/openapi.json`);
    assert.equal(res.status, 200);
    etag = res.headers.get('etag') ?? '';
    doc = (await res.json()) as Json;
  });
  after(async () => {
    await app.close();
    rmSync(projects, { recursive: true, force: true });
  });

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

  test('every route documents the zod schema that validates it: none is pending', async (t) => {
    const op = doc.paths['/api/auth/login'].post;
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
    const ops = Object.values<Json>(doc.paths).flatMap((item) => Object.values<Json>(item));
    const responsePending = ops.filter((o) => o['x-response-schema'] === 'pending');
    t.diagnostic(`operations ${ops.length}, response schema pending ${responsePending.length}`);
    t.diagnostic(`response pending: ${responsePending.map((o) => o.operationId).join(' ')}`);
    assert.deepEqual(
      ops.filter((o) => o['x-schema'] === 'pending').map((o) => o.operationId),
      [],
      'operations not declared with endpoint()',
    );
    assert.deepEqual(
      responsePending.map((o) => o.operationId),
      [],
      'operations whose success answer is not documented',
    );
    // Media types other than JSON are documented as the route reads them.
    assert.ok(
      doc.paths['/api/sso/acs/{provider_name}'].post.requestBody.content['application/x-www-form-urlencoded'],
    );
    assert.ok(
      doc.paths['/api/upload/batch'].post.requestBody.content['application/json'].schema.properties.usage,
    );
    assert.equal(
      doc.paths['/livez'].get.responses['200'].content['application/json'].schema.required[0],
      'status',
    );
  });

  test('every GET answers what it documents (as admin, with the test world data): bodies and statuses', async (t) => {
    const s = await login(app.url, ADMIN.username, ADMIN.password);
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    const tenantId = s.user.tenant_id ?? 1;
    // The world: a tenant, a registered machine that has polled once, a day of uploaded usage and
    // messages (with a conversation), a prompt template; the registration answer is checked too.
    const slug = `oa-${Date.now().toString(36)}`;
    const tenant = await api(app.url, 'POST', '/api/tenants', { auth: s, body: { name: slug, slug } });
    assert.equal(tenant.status, 201, JSON.stringify(tenant.body));
    const token = await registrationToken(app.url, s, tenantId);
    const reg = await fetch(`${app.url}/api/remote/agent/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(registerBody(token)),
    });
    assert.equal(reg.status, 201);
    const regBody = (await reg.json()) as Json;
    const regSchema =
      doc.paths['/api/remote/agent/register'].post.responses['201'].content['application/json'].schema;
    assert.ok(ajv.validate(regSchema, regBody), ajv.errorsText());
    const machine = {
      machineId: regBody.machine_id as string,
      agentToken: regBody.agent_token as string,
      headers: { authorization: `Bearer ${regBody.agent_token}`, 'x-machine-id': regBody.machine_id },
    };
    assert.equal((await agentMessage(app.url, machine)).status, 200);
    const today = app.clock.now().toISOString().slice(0, 10);
    const upload = { 'x-upload-auth': app.settings.SVC_UPLOAD_AUTH_KEY ?? '' };
    const usage = await api(app.url, 'POST', '/api/upload/usage', {
      headers: upload,
      body: { date: today, tool_name: 'cli_alpha', input_tokens: 10, output_tokens: 5, request_count: 2 },
    });
    assert.equal(usage.status, 200, JSON.stringify(usage.body));
    const conversation = `conv-${Date.now().toString(36)}`;
    const messages = await api(app.url, 'POST', '/api/upload/messages', {
      headers: upload,
      body: {
        date: today,
        tool_name: 'cli_alpha',
        messages: [
          { message_id: `${conversation}-1`, role: 'user', content: 'hi', conversation_id: conversation },
          {
            message_id: `${conversation}-2`,
            role: 'assistant',
            content: 'ok',
            conversation_id: conversation,
          },
        ],
      },
    });
    assert.equal(messages.status, 200, JSON.stringify(messages.body));
    for (const [path, b] of [
      ['/api/upload/usage', usage.body],
      ['/api/upload/messages', messages.body],
    ] as const)
      assert.ok(ajv.validate(doc.paths[path].post.responses['200'].content['application/json'].schema, b));
    const prompt = await api(app.url, 'POST', '/api/prompts', {
      auth: s,
      body: { name: `p-${slug}`, content: 'Hello {{name}}' },
    });
    assert.equal(prompt.status, 201, JSON.stringify(prompt.body));
    // A workspace session belongs to a tenant's user (the system administrator has no tenant).
    const member = await createUser(app, s, { role: 'user', tenant_id: tenant.body.tenant.id });
    const memberSession = await login(app.url, member.username, member.password);
    const workspace = await api(app.url, 'POST', '/api/sessions', {
      auth: memberSession,
      body: { tool_name: 'cli_alpha', title: 'OpenAPI world' },
    });
    assert.equal(workspace.status, 201, JSON.stringify(workspace.body));
    // A remote session on the machine (the answers of creation and of its reads are checked too).
    const remote = await api(app.url, 'POST', '/api/remote/sessions', {
      auth: s,
      body: { machine_id: machine.machineId, project_path: '/tmp', cli_tool: 'cli_alpha' },
    });
    assert.equal(remote.status, 201, JSON.stringify(remote.body));
    const remoteSchema =
      doc.paths['/api/remote/sessions'].post.responses['201'].content['application/json'].schema;
    assert.ok(ajv.validate(remoteSchema, remote.body), ajv.errorsText());
    const report = await api(app.url, 'POST', '/api/compliance/reports', {
      auth: s,
      body: { report_type: 'usage_summary', period_start: today, period_end: today, format: 'json' },
    });
    assert.equal(report.status, 201, JSON.stringify(report.body));
    const reportSchema =
      doc.paths['/api/compliance/reports'].post.responses['201'].content['application/json'].schema;
    assert.ok(ajv.validate(reportSchema, report.body), ajv.errorsText());
    // An OAuth2 identity provider (its secret must never come back) and a summary refresh run.
    const ssoSecret = `sso-secret-${Date.now().toString(36)}`;
    const provider = await api(app.url, 'POST', '/api/sso/providers', {
      auth: s,
      body: {
        name: `oa-${slug}`,
        provider_type: 'oauth2',
        client_id: 'client-oa',
        client_secret: ssoSecret,
        authorization_url: 'https://idp.example/authorize',
        token_url: 'https://idp.example/token',
        userinfo_url: 'https://idp.example/userinfo',
        redirect_uri: `${app.url}/api/sso/callback/oa-${slug}`,
        scopes: ['read:user'],
      },
    });
    assert.equal(provider.status, 201, JSON.stringify(provider.body));
    const providerSchema =
      doc.paths['/api/sso/providers'].post.responses['201'].content['application/json'].schema;
    assert.ok(ajv.validate(providerSchema, provider.body), ajv.errorsText());
    const refresh = await api(app.url, 'POST', '/api/summary/refresh', { auth: s });
    assert.equal(refresh.status, 202, JSON.stringify(refresh.body));
    // An autonomous workflow of the member, stopped at once (its creation and stop answers checked).
    const project = makeGitRepo(
      { 'README.md': '# app\n' },
      { root: path.join(tenantProjectRoot(projects, tenant.body.tenant.id), 'app') },
    );
    const workflow = await api(app.url, 'POST', '/api/autonomous/workflows', {
      auth: memberSession,
      body: { requirement: 'Add a line to the README', project_path: project.path, cli_tool: 'cli_alpha' },
    });
    assert.equal(workflow.status, 201, JSON.stringify(workflow.body));
    const workflowId: string = workflow.body.id;
    const createdSchema =
      doc.paths['/api/autonomous/workflows'].post.responses['201'].content['application/json'].schema;
    assert.ok(ajv.validate(createdSchema, workflow.body), ajv.errorsText());
    const stopped = await api(app.url, 'POST', `/api/autonomous/workflows/${workflowId}/stop`, {
      auth: memberSession,
    });
    const stopDoc = doc.paths['/api/autonomous/workflows/{id}/stop'].post.responses[String(stopped.status)];
    assert.ok(stopDoc, `stop answered ${stopped.status}: ${JSON.stringify(stopped.body)}`);
    if (stopped.status === 200)
      assert.ok(ajv.validate(stopDoc.content['application/json'].schema, stopped.body), ajv.errorsText());
    const files = await api(app.url, 'GET', '/api/remote/agent/files');

    /** Path parameter values, by template (the same name means different things on different paths). */
    const paramValue = (template: string, name: string): string | undefined => {
      if (name === 'user_id') return String(s.user.id);
      if (name === 'tenant_id') return String(tenant.body.tenant.id);
      if (name === 'slug') return slug;
      if (name === 'date_str') return today;
      if (name === 'tool_name') return 'cli_alpha';
      if (name === 'days') return '7';
      if (name === 'user_name') return s.user.username;
      if (name === 'session_id' && template.startsWith('/api/conversation-')) return conversation;
      if (name === 'template_id') return String(prompt.body.template.id);
      if (name === 'session_id' && template.startsWith('/api/sessions/'))
        return workspace.body.session.session_id;
      if (name === 'path' && template.startsWith('/api/remote/agent/files')) return files.body?.files?.[0];
      if (name === 'id' && template.startsWith('/api/remote/machines/') && !template.endsWith('/browse'))
        return machine.machineId;
      if (name === 'id' && template.startsWith('/api/remote/sessions/')) return remote.body.session_id;
      if (name === 'report_id') return report.body.report_id;
      if (name === 'id' && template.startsWith('/api/autonomous/workflows/')) return workflowId;
      if (name === 'mid') return '1';
      if (name === 'provider_name') return provider.body.provider.name;
      if (name === 'workflow_id' && template.startsWith('/api/summary/')) return refresh.body.workflow_id;
      return undefined;
    };
    const errorSchema = doc.components.schemas.Error;
    const schemaOf = (response: Json | undefined): Json | undefined => {
      if (!response) return undefined;
      if (response.$ref) return schemaOf(doc.components.responses[response.$ref.split('/').pop()]);
      const schema = response.content?.['application/json']?.schema;
      return schema?.$ref ? errorSchema : schema;
    };
    const checked: string[] = [];
    const skipped: string[] = [];
    const unschematised: string[] = [];
    const broken: string[] = [];
    for (const [template, item] of Object.entries<Json>(doc.paths)) {
      const op = item.get;
      if (!op || op['x-outside-router'] || template.endsWith('/stream') || template.endsWith('/ws')) continue;
      let url = template;
      let missing = false;
      for (const m of template.matchAll(/\{(\w+)\}/g)) {
        const v = paramValue(template, m[1]!);
        if (v === undefined) missing = true;
        else url = url.replace(m[0], encodeURIComponent(v).replace(/%2F/g, '/'));
      }
      if (missing) {
        skipped.push(template);
        continue;
      }
      const res = await fetch(app.url + url, { headers: s.headers, redirect: 'manual' });
      const type = res.headers.get('content-type') ?? '';
      const text = await res.text();
      if (text.includes(ssoSecret)) broken.push(`GET ${url}: answers the identity provider's secret`);
      const documented = op.responses[String(res.status)];
      if (!documented) {
        broken.push(`GET ${url}: status ${res.status} not documented (${text.slice(0, 200)})`);
        continue;
      }
      const schema = schemaOf(documented);
      if (!schema) {
        if (res.status < 400) (type.includes('json') ? unschematised : checked).push(template);
        continue;
      }
      if (!type.includes('application/json')) {
        broken.push(`GET ${url}: ${res.status} documented as JSON, answered ${type}`);
        continue;
      }
      checked.push(template);
      if (!ajv.validate(schema, JSON.parse(text)))
        broken.push(`GET ${url}: ${res.status} ${ajv.errorsText()} in ${text.slice(0, 300)}`);
    }
    t.diagnostic(
      `checked ${checked.length}, JSON without a schema ${unschematised.length}, skipped ${skipped.length}`,
    );
    t.diagnostic(`without a schema: ${unschematised.join(' ')}`);
    t.diagnostic(`skipped (no value for a path parameter): ${skipped.join(' ')}`);
    for (const p of [
      '/api/auth/me',
      '/api/admin/users',
      '/api/remote/machines',
      '/api/remote/machines/{id}',
      '/api/remote/sessions',
      '/api/analytics/forecast',
      '/api/remote/sessions/{id}',
      '/api/compliance/reports/{report_id}',
      '/api/sessions/{session_id}',
      '/api/autonomous/workflows',
      '/api/autonomous/workflows/{id}',
      '/api/autonomous/workflows/{id}/timeline',
      '/api/summary/refresh/{workflow_id}',
      '/api/sso/login/{provider_name}',
      '/livez',
      '/readyz',
    ])
      assert.ok(checked.includes(p), `${p} not checked: ${checked.join(', ')}`);
    // Every JSON answer has its schema; the one exception is a file of the agent that happens to be JSON.
    assert.deepEqual(unschematised, ['/api/remote/agent/files/{path}']);
    assert.ok(!app.logs.join('\n').includes(ssoSecret), "the identity provider's secret is in the logs");
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
