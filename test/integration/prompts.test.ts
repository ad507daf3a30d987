// /api/prompts*: create with the spec defaults, list (own + public of the tenant, featured first,
// filters, pagination), categories, featured, get/put/delete by owner or administrator only, render
// (missing variable named, no injection, use_count counted once per render even when concurrent),
// validation errors and tenant isolation of every read.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { buildCast, type Cast, createUser, PASSWORD, uniqueName } from '../support/actors.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { api, login, type Session } from '../support/session.ts';
import { sessionWithoutTenant } from './workspace-support.ts';

let app: TestApp;
let cast: Cast;
let userA: Session; // role user, tenant A
let peerA: Session; // another user of tenant A
let adminA: Session; // tenant admin of A
let adminB: Session; // tenant admin of B
let platform: Session;
let readonlyA: Session;
let noTenant: Session;

before(async () => {
  app = await startTestApp();
  cast = await buildCast(app);
  userA = cast.actors.user.session!;
  adminA = cast.actors.tenant_admin.session!;
  adminB = cast.actors.other_tenant_admin.session!;
  platform = cast.actors.platform_admin.session!;
  readonlyA = cast.actors.readonly.session!;
  const peer = await createUser(app, cast.admin, { role: 'user', tenant_id: cast.tenantA });
  peerA = await login(app.url, peer.username, PASSWORD);
  noTenant = await sessionWithoutTenant(app, cast);
});
after(() => app?.close());

const call = (auth: Session | undefined, method: string, path: string, body?: unknown) =>
  api(app.url, method, path, { auth, body });
const create = async (auth: Session, body: Record<string, unknown>) => {
  const r = await call(auth, 'POST', '/api/prompts', { content: 'Hello {{name}}', ...body });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.template;
};
const ids = (r: { body: { templates: { id: number }[] } }) => r.body.templates.map((t) => t.id);

test('create: spec defaults (category general, not public, not featured, use_count 0), tenant from the caller', async () => {
  const t = await create(userA, { name: 'Defaults' });
  assert.equal(t.category, 'general');
  assert.equal(t.is_public, false);
  assert.equal(t.is_featured, false);
  assert.equal(t.use_count, 0);
  assert.deepEqual(t.variables, []);
  assert.deepEqual(t.tags, []);
  assert.equal(t.description, null);
  assert.equal(t.author_id, cast.actors.user.id);
  assert.equal(t.tenant_id, cast.tenantA);
  const [row] = await app.database.sql.query<{ tenant_id: number }>(
    'SELECT tenant_id FROM prompt_templates WHERE id = ?',
    [t.id],
  );
  assert.equal(Number(row!.tenant_id), cast.tenantA);
  const full = await create(userA, {
    name: 'Full',
    description: 'd',
    category: 'review',
    variables: ['name', { name: 'lang', description: 'language', default: 'TS' }],
    tags: ['a', 'b'],
    is_public: true,
  });
  assert.deepEqual(
    [full.category, full.description, full.is_public, full.tags],
    ['review', 'd', true, ['a', 'b']],
  );
  assert.deepEqual(full.variables[1], { name: 'lang', description: 'language', default: 'TS' });
});

test('create validation: 400 naming the field; 401 anonymous; 403 readonly; is_featured by admins only', async () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ content: 'x' }, 'name'],
    [{ name: 'n' }, 'content'],
    [{ name: 'n', content: '' }, 'content'],
    [{ name: 'n', content: 'x', variables: 'name' }, 'variables'],
    [{ name: 'n', content: 'x', variables: ['1bad'] }, 'variables.0'],
    [{ name: 'n', content: 'x', tags: [1] }, 'tags.0'],
    [{ name: 'n', content: 'x', is_public: 'yes' }, 'is_public'],
    [{ name: 'x'.repeat(201), content: 'x' }, 'name'],
  ];
  for (const [body, field] of cases) {
    const r = await call(userA, 'POST', '/api/prompts', body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.ok(r.body.error.startsWith(`${field}:`), `${JSON.stringify(body)} -> ${r.body.error}`);
  }
  assert.equal((await call(undefined, 'POST', '/api/prompts', { name: 'n', content: 'x' })).status, 401);
  assert.equal((await call(undefined, 'GET', '/api/prompts')).status, 401);
  assert.equal((await call(readonlyA, 'POST', '/api/prompts', { name: 'n', content: 'x' })).status, 403);
  const featuredByUser = await call(userA, 'POST', '/api/prompts', {
    name: 'n',
    content: 'x',
    is_featured: true,
  });
  assert.deepEqual(
    [featuredByUser.status, featuredByUser.body.error],
    [403, 'Only administrators can set is_featured'],
  );
  const featuredByAdmin = await create(adminA, {
    name: 'Admin featured',
    is_featured: true,
    is_public: true,
  });
  assert.equal(featuredByAdmin.is_featured, true);
});

test('visibility: own + public of the same tenant; private and other tenants are 404; admins see their scope', async () => {
  const tag = uniqueName('vis');
  const priv = await create(userA, { name: 'private', tags: [tag] });
  const pub = await create(userA, { name: 'public', tags: [tag], is_public: true });
  const peerPriv = await create(peerA, { name: 'peer private', tags: [tag] });
  const pubB = await create(adminB, { name: 'public B', tags: [tag], is_public: true });
  const lone = await create(noTenant, { name: 'lone', tags: [tag], is_public: true });
  const list = async (s: Session) => ids(await call(s, 'GET', `/api/prompts?tag=${tag}&limit=200`)).sort();
  const sorted = (...xs: number[]) => xs.sort();
  assert.deepEqual(await list(userA), sorted(priv.id, pub.id));
  assert.deepEqual(await list(peerA), sorted(pub.id, peerPriv.id));
  assert.deepEqual(await list(readonlyA), sorted(pub.id), 'readonly reads public templates of its tenant');
  assert.deepEqual(await list(adminA), sorted(priv.id, pub.id, peerPriv.id), 'tenant admin: all of tenant A');
  assert.deepEqual(await list(adminB), sorted(pubB.id), 'tenant B never sees tenant A');
  assert.deepEqual(await list(noTenant), sorted(lone.id), 'a user without tenant sees only its own');
  assert.deepEqual(await list(platform), sorted(priv.id, pub.id, peerPriv.id, pubB.id, lone.id));

  assert.equal((await call(peerA, 'GET', `/api/prompts/${pub.id}`)).status, 200);
  for (const [s, id] of [
    [peerA, priv.id],
    [adminB, pub.id],
    [noTenant, pub.id],
    [userA, pubB.id],
    [userA, lone.id],
  ] as [Session, number][]) {
    const r = await call(s, 'GET', `/api/prompts/${id}`);
    assert.deepEqual([r.status, r.body.error], [404, 'Prompt template not found']);
    assert.equal(
      (await call(s, 'POST', `/api/prompts/${id}/render`, { variables: { name: 'x' } })).status,
      404,
    );
  }
  assert.equal((await call(adminA, 'GET', `/api/prompts/${peerPriv.id}`)).status, 200);
  assert.equal((await call(platform, 'GET', `/api/prompts/${pubB.id}`)).status, 200);
  assert.equal((await call(userA, 'GET', '/api/prompts/999999999')).status, 404);
  assert.equal((await call(userA, 'GET', '/api/prompts/abc')).status, 400);
});

test('list filters (category, search, tag, featured) and pagination with defaults 50/0', async () => {
  const tag = uniqueName('flt');
  const cat = uniqueName('cat').slice(0, 40);
  const a = await create(userA, { name: 'Alpha_100% sure', category: cat, tags: [tag, 'x'] });
  const b = await create(userA, { name: 'Beta', description: 'mentions ZEBRA', category: cat, tags: [tag] });
  const c = await create(userA, { name: 'Gamma', content: 'zebra {{name}}', tags: [tag] });
  const d = await create(adminA, {
    name: 'Delta',
    tags: [`${tag}-longer`],
    is_public: true,
    is_featured: true,
  });
  const get = (q: string) => call(userA, 'GET', `/api/prompts?${q}`);
  const all = await get(`tag=${tag}`);
  assert.deepEqual([all.body.limit, all.body.offset, all.body.total], [50, 0, 3]);
  assert.deepEqual(ids(await get(`tag=${tag}&category=${cat}`)).sort(), [a.id, b.id].sort());
  assert.deepEqual(
    ids(await get(`tag=${tag}&search=zebra`)).sort(),
    [b.id, c.id].sort(),
    'search is case-insensitive',
  );
  assert.deepEqual(ids(await get(`tag=${tag}&search=${encodeURIComponent('100%')}`)), [a.id], '% is literal');
  assert.deepEqual(ids(await get(`search=${encodeURIComponent('a_100')}&tag=${tag}`)), [a.id]);
  assert.deepEqual(ids(await get(`tag=${tag}-longer`)), [d.id], 'a tag matches whole tags only');
  assert.deepEqual(ids(await get(`tag=${tag}-longer&featured=true`)), [d.id]);
  assert.deepEqual(ids(await get(`tag=${tag}&featured=true`)), []);
  const page = await get(`tag=${tag}&limit=2&offset=2`);
  assert.deepEqual(
    [page.body.templates.length, page.body.total, page.body.limit, page.body.offset],
    [1, 3, 2, 2],
  );
  for (const [q, field] of [
    ['limit=0', 'limit'],
    ['limit=201', 'limit'],
    ['offset=-1', 'offset'],
    ['featured=yes', 'featured'],
  ]) {
    const r = await get(q!);
    assert.equal(r.status, 400, q);
    assert.ok(r.body.error.startsWith(`${field}:`), r.body.error);
  }
});

test('categories and featured: only what the caller can see', async () => {
  const cat = uniqueName('onlyb').slice(0, 40);
  await create(adminB, { name: 'B cat', category: cat, is_public: true, is_featured: true });
  const catsA = (await call(userA, 'GET', '/api/prompts/categories')).body.categories;
  assert.ok(!catsA.some((c: { category: string }) => c.category === cat), 'tenant B category hidden from A');
  const catsB = (await call(adminB, 'GET', '/api/prompts/categories')).body.categories;
  assert.deepEqual(
    catsB.find((c: { category: string }) => c.category === cat),
    { category: cat, count: 1 },
  );
  assert.ok(catsA.some((c: { category: string; count: number }) => c.category === 'general' && c.count > 0));
  const featA = await call(userA, 'GET', '/api/prompts/featured');
  assert.equal(featA.status, 200);
  assert.ok(featA.body.templates.length > 0);
  for (const t of featA.body.templates) {
    assert.equal(t.is_featured, true);
    assert.equal(t.tenant_id, cast.tenantA);
  }
  const featB = await call(adminB, 'GET', '/api/prompts/featured');
  assert.ok(featB.body.templates.every((t: { tenant_id: number }) => t.tenant_id === cast.tenantB));
  assert.deepEqual((await call(noTenant, 'GET', '/api/prompts/featured')).body.templates, []);
  assert.equal((await call(undefined, 'GET', '/api/prompts/categories')).status, 401);
});

test('update and delete: author or administrator; visible non-owner 403; invisible 404', async () => {
  const pub = await create(userA, { name: 'Editable', is_public: true });
  const peer = await call(peerA, 'PUT', `/api/prompts/${pub.id}`, { name: 'hijack' });
  assert.deepEqual(
    [peer.status, peer.body.error],
    [403, 'Only the author or an administrator can change this template'],
  );
  assert.equal((await call(peerA, 'DELETE', `/api/prompts/${pub.id}`)).status, 403);
  assert.equal((await call(adminB, 'PUT', `/api/prompts/${pub.id}`, { name: 'x' })).status, 404);
  assert.equal((await call(adminB, 'DELETE', `/api/prompts/${pub.id}`)).status, 404);

  const own = await call(userA, 'PUT', `/api/prompts/${pub.id}`, {
    name: 'Renamed',
    tags: ['t1'],
    variables: ['who'],
    content: 'Hi {{who}}',
  });
  assert.equal(own.status, 200, JSON.stringify(own.body));
  assert.deepEqual(
    [own.body.template.name, own.body.template.tags, own.body.template.variables, own.body.template.category],
    ['Renamed', ['t1'], ['who'], 'general'],
  );
  assert.equal((await call(userA, 'PUT', `/api/prompts/${pub.id}`, { is_featured: true })).status, 403);
  assert.equal((await call(userA, 'PUT', `/api/prompts/${pub.id}`, { category: '' })).status, 400);
  const feat = await call(adminA, 'PUT', `/api/prompts/${pub.id}`, { is_featured: true });
  assert.equal(feat.body.template.is_featured, true);
  assert.equal((await call(readonlyA, 'PUT', `/api/prompts/${pub.id}`, { name: 'r' })).status, 403);

  const del = await call(userA, 'DELETE', `/api/prompts/${pub.id}`);
  assert.equal(del.status, 200);
  assert.equal((await call(userA, 'GET', `/api/prompts/${pub.id}`)).status, 404);
  const byAdmin = await create(peerA, { name: 'admin deletes' });
  assert.equal((await call(adminA, 'DELETE', `/api/prompts/${byAdmin.id}`)).status, 200);
  const byPlatform = await create(adminB, { name: 'platform deletes' });
  assert.equal((await call(platform, 'DELETE', `/api/prompts/${byPlatform.id}`)).status, 200);
});

test('render: substitutes, defaults, missing variable named, no injection, use_count counts every render', async () => {
  const t = await create(userA, {
    name: 'Render',
    content: 'Review {{file}} in {{lang}} for {{who}}.',
    variables: ['file', { name: 'lang', default: 'TypeScript' }, 'who'],
    is_public: true,
  });
  const ok = await call(peerA, 'POST', `/api/prompts/${t.id}/render`, {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal `${...}` must survive rendering
    variables: { file: 'a.ts', who: '{{file}} ${1+1}', extra: 'ignored' },
  });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal `${...}` must survive rendering
  assert.equal(ok.body.rendered, 'Review a.ts in TypeScript for {{file}} ${1+1}.');
  assert.deepEqual(ok.body.variables_used, ['file', 'lang', 'who']);
  assert.equal(ok.body.use_count, 1);
  const numbers = await call(userA, 'POST', `/api/prompts/${t.id}/render`, {
    variables: { file: 7, who: true },
  });
  assert.equal(numbers.body.rendered, 'Review 7 in TypeScript for true.');

  const missing = await call(userA, 'POST', `/api/prompts/${t.id}/render`, { variables: { file: 'a' } });
  assert.deepEqual([missing.status, missing.body.error], [400, 'Missing variable: who']);
  const badShape = await call(userA, 'POST', `/api/prompts/${t.id}/render`, {
    variables: { file: { x: 1 } },
  });
  assert.equal(badShape.status, 400);
  assert.ok(badShape.body.error.startsWith('variables.file:'), badShape.body.error);

  const renders = await Promise.all(
    Array.from({ length: 8 }, () =>
      call(userA, 'POST', `/api/prompts/${t.id}/render`, { variables: { file: 'f', who: 'w' } }),
    ),
  );
  assert.ok(renders.every((r) => r.status === 200));
  const after = await call(userA, 'GET', `/api/prompts/${t.id}`);
  assert.equal(
    after.body.template.use_count,
    10,
    'two renders before, eight concurrent; failed renders do not count',
  );
});
