// The authorization matrix: every route of issue 3 x every role of the spec (plus anonymous and a
// tenant admin of another tenant) -> the expected status. Expectations come from the spec's tables,
// written out here (not from domain/), so removing any guard turns an expected 401/403 into something
// else and fails the test.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  type Actor,
  type ActorName,
  buildCast,
  type Cast,
  createTenant,
  createUser,
  uniqueName,
} from '../support/actors.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { api, login, type Session } from '../support/session.ts';

// Document 1, "Roles and permissions": the built-in permission sets. Administrators (legacy admin,
// platform_admin, tenant_admin) hold all 19.
const ALL = [
  'view_dashboard',
  'view_messages',
  'export_messages',
  'view_analysis',
  'run_analysis',
  'export_analysis',
  'view_users',
  'create_user',
  'edit_user',
  'delete_user',
  'manage_permissions',
  'view_quota',
  'manage_quota',
  'view_audit_logs',
  'export_audit_logs',
  'view_content_filter',
  'manage_content_filter',
  'admin_access',
  'system_config',
];
const SPEC_PERMISSIONS: Record<string, string[]> = {
  admin: ALL,
  platform_admin: ALL,
  tenant_admin: ALL,
  manager: [
    'view_dashboard',
    'view_messages',
    'export_messages',
    'view_analysis',
    'run_analysis',
    'export_analysis',
    'view_users',
    'view_quota',
    'view_audit_logs',
    'export_audit_logs',
    'view_content_filter',
  ],
  user: ['view_dashboard', 'view_messages', 'view_analysis', 'view_quota'],
  readonly: ['view_dashboard'],
};
const SYSTEM_ADMIN_ROLES = new Set(['platform_admin', 'admin']);
const ADMIN_ROLES = new Set(['platform_admin', 'admin', 'tenant_admin']);

/** Who may call a route, in the spec's words. */
type Rule =
  | { kind: 'public' }
  | { kind: 'session' } // any logged-in user
  | { kind: 'permission'; p: string } // holders of the permission, own tenant scope
  | { kind: 'admin' } // admin role (system or tenant admin)
  | { kind: 'system' } // system administrator only
  | { kind: 'admin_of_tenant_a' } // system admin, or tenant admin of tenant A
  | { kind: 'permission_in_tenant_a'; p: string }; // system admin, or a holder of p in tenant A

function expected(rule: Rule, actor: Actor, ok: number): number {
  if (rule.kind === 'public') return ok;
  if (!actor.role) return 401;
  const role = actor.role;
  switch (rule.kind) {
    case 'session':
      return ok;
    case 'permission':
      return SPEC_PERMISSIONS[role]!.includes(rule.p) ? ok : 403;
    case 'admin':
      return ADMIN_ROLES.has(role) ? ok : 403;
    case 'system':
      return SYSTEM_ADMIN_ROLES.has(role) ? ok : 403;
    case 'admin_of_tenant_a':
      return SYSTEM_ADMIN_ROLES.has(role) || (role === 'tenant_admin' && actor.tenant === 'A') ? ok : 403;
    case 'permission_in_tenant_a':
      return SYSTEM_ADMIN_ROLES.has(role) ||
        (SPEC_PERMISSIONS[role]!.includes(rule.p) && actor.tenant === 'A')
        ? ok
        : 403;
  }
}

interface Fixtures {
  cast: Cast;
  userInA: number;
  keyInA: number;
  /** A tenant admin of A outside the cast (cast sessions end in the logout row). */
  keyWriter: Session;
  tenantC: number;
}

interface Row {
  method: string;
  path: string;
  rule: Rule;
  ok: number;
  /** Builds the request; `fresh` is true when the actor is expected to succeed (mutations get their own target). */
  request: (
    f: Fixtures,
    actor: Actor,
    fresh: boolean,
  ) => Promise<{ path: string; body?: unknown }> | { path: string; body?: unknown };
}

let app: TestApp;
let f: Fixtures;

const keyBody = (name: string) => ({
  provider: 'openai',
  key_name: name,
  api_key: 'sk-test-000000000000000000000000',
});

/** A key of tenant A written by A's tenant admin (a system admin's key is theirs alone to change). */
async function newKeyInA(): Promise<number> {
  const r = await api(app.url, 'POST', `/api/api-keys?tenant_id=${f.cast.tenantA}`, {
    auth: f.keyWriter,
    body: keyBody(uniqueName('k')),
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.key.id;
}

const ROWS: Row[] = [
  // Authentication (document 1)
  {
    method: 'GET',
    path: '/api/auth/check',
    rule: { kind: 'public' },
    ok: 200,
    request: () => ({ path: '/api/auth/check' }),
  },
  {
    method: 'GET',
    path: '/api/auth/profile',
    rule: { kind: 'session' },
    ok: 200,
    request: () => ({ path: '/api/auth/profile' }),
  },
  {
    method: 'GET',
    path: '/api/auth/me',
    rule: { kind: 'session' },
    ok: 200,
    request: () => ({ path: '/api/auth/me' }),
  },
  {
    method: 'POST',
    path: '/api/auth/change-password',
    rule: { kind: 'session' },
    ok: 400,
    request: () => ({
      path: '/api/auth/change-password',
      body: { current_password: 'wrong-password-xx', new_password: 'another-password-123' },
    }),
  },
  {
    method: 'GET',
    path: '/api/password-policy',
    rule: { kind: 'session' },
    ok: 200,
    request: () => ({ path: '/api/password-policy' }),
  },
  // Administration (document 2)
  {
    method: 'GET',
    path: '/api/admin/users',
    rule: { kind: 'permission', p: 'view_users' },
    ok: 200,
    request: () => ({ path: '/api/admin/users' }),
  },
  {
    method: 'POST',
    path: '/api/admin/users',
    rule: { kind: 'admin' },
    ok: 201,
    request: () => ({
      path: '/api/admin/users',
      body: { username: uniqueName('m'), password: 'matrix-password-123', role: 'user' },
    }),
  },
  {
    method: 'PUT',
    path: '/api/admin/users/<id>',
    rule: { kind: 'admin_of_tenant_a' },
    ok: 200,
    request: (x) => ({
      path: `/api/admin/users/${x.userInA}`,
      body: { email: `${uniqueName('e')}@example.test` },
    }),
  },
  {
    method: 'PUT',
    path: '/api/admin/users/<id>/password',
    rule: { kind: 'admin_of_tenant_a' },
    ok: 200,
    request: (x) => ({
      path: `/api/admin/users/${x.userInA}/password`,
      body: { password: 'reset-password-1234' },
    }),
  },
  {
    method: 'PUT',
    path: '/api/admin/users/<id>/quota',
    rule: { kind: 'admin_of_tenant_a' },
    ok: 200,
    request: (x) => ({ path: `/api/admin/users/${x.userInA}/quota`, body: { daily_token_quota: 5 } }),
  },
  {
    method: 'DELETE',
    path: '/api/admin/users/<id>',
    rule: { kind: 'admin_of_tenant_a' },
    ok: 200,
    request: async (x, _a, fresh) => ({
      path: `/api/admin/users/${fresh ? (await createUser(app, x.cast.admin, { role: 'user', tenant_id: x.cast.tenantA })).id : x.userInA}`,
    }),
  },
  // Tenants (document 2)
  {
    method: 'GET',
    path: '/api/tenants',
    rule: { kind: 'system' },
    ok: 200,
    request: () => ({ path: '/api/tenants' }),
  },
  {
    method: 'POST',
    path: '/api/tenants',
    rule: { kind: 'system' },
    ok: 201,
    request: () => ({ path: '/api/tenants', body: { name: uniqueName('T') } }),
  },
  {
    method: 'GET',
    path: '/api/tenants/plans',
    rule: { kind: 'admin' },
    ok: 200,
    request: () => ({ path: '/api/tenants/plans' }),
  },
  {
    method: 'GET',
    path: '/api/tenants/<id>',
    rule: { kind: 'admin_of_tenant_a' },
    ok: 200,
    request: (x) => ({ path: `/api/tenants/${x.cast.tenantA}` }),
  },
  {
    method: 'GET',
    path: '/api/tenants/slug/<slug>',
    rule: { kind: 'admin_of_tenant_a' },
    ok: 200,
    request: async (x) => ({
      path: `/api/tenants/slug/${(await api(app.url, 'GET', `/api/tenants/${x.cast.tenantA}`, { auth: x.cast.admin })).body.tenant.slug}`,
    }),
  },
  {
    method: 'PUT',
    path: '/api/tenants/<id>',
    rule: { kind: 'system' },
    ok: 200,
    request: (x) => ({ path: `/api/tenants/${x.tenantC}`, body: { contact_name: 'Someone' } }),
  },
  {
    method: 'PUT',
    path: '/api/tenants/<id>/quota',
    rule: { kind: 'system' },
    ok: 200,
    request: (x) => ({ path: `/api/tenants/${x.tenantC}/quota`, body: { max_users: 50 } }),
  },
  {
    method: 'PUT',
    path: '/api/tenants/<id>/settings',
    rule: { kind: 'admin_of_tenant_a' },
    ok: 200,
    request: (x) => ({ path: `/api/tenants/${x.cast.tenantA}/settings`, body: { data_retention_days: 400 } }),
  },
  {
    method: 'POST',
    path: '/api/tenants/<id>/suspend',
    rule: { kind: 'system' },
    ok: 200,
    request: (x) => ({ path: `/api/tenants/${x.tenantC}/suspend` }),
  },
  {
    method: 'POST',
    path: '/api/tenants/<id>/activate',
    rule: { kind: 'system' },
    ok: 200,
    request: (x) => ({ path: `/api/tenants/${x.tenantC}/activate` }),
  },
  {
    method: 'POST',
    path: '/api/tenants/<id>/check-quota',
    rule: { kind: 'admin_of_tenant_a' },
    ok: 200,
    request: (x) => ({ path: `/api/tenants/${x.cast.tenantA}/check-quota` }),
  },
  {
    method: 'GET',
    path: '/api/tenants/<id>/usage',
    rule: { kind: 'admin_of_tenant_a' },
    ok: 200,
    request: (x) => ({ path: `/api/tenants/${x.cast.tenantA}/usage` }),
  },
  {
    method: 'GET',
    path: '/api/tenants/<id>/stats',
    rule: { kind: 'admin_of_tenant_a' },
    ok: 200,
    request: (x) => ({ path: `/api/tenants/${x.cast.tenantA}/stats` }),
  },
  {
    method: 'DELETE',
    path: '/api/tenants/<id>?hard=true',
    rule: { kind: 'system' },
    ok: 200,
    request: async (x, _a, fresh) => ({
      path: `/api/tenants/${fresh ? await createTenant(app, x.cast.admin) : x.tenantC}?hard=true`,
    }),
  },
  // Tenant-scoped API keys (document 1), targeting tenant A
  {
    method: 'GET',
    path: '/api/api-keys?tenant_id=A',
    rule: { kind: 'admin_of_tenant_a' },
    ok: 200,
    request: (x) => ({ path: `/api/api-keys?tenant_id=${x.cast.tenantA}` }),
  },
  {
    method: 'POST',
    path: '/api/api-keys?tenant_id=A',
    rule: { kind: 'admin_of_tenant_a' },
    ok: 201,
    request: (x) => ({ path: `/api/api-keys?tenant_id=${x.cast.tenantA}`, body: keyBody(uniqueName('k')) }),
  },
  {
    method: 'PUT',
    path: '/api/api-keys/<id>?tenant_id=A',
    rule: { kind: 'admin_of_tenant_a' },
    ok: 200,
    request: (x) => ({
      path: `/api/api-keys/${x.keyInA}?tenant_id=${x.cast.tenantA}`,
      body: { key_name: uniqueName('renamed') },
    }),
  },
  {
    method: 'DELETE',
    path: '/api/api-keys/<id>?tenant_id=A',
    rule: { kind: 'admin_of_tenant_a' },
    ok: 200,
    request: async (x, _a, fresh) => ({
      path: `/api/api-keys/${fresh ? await newKeyInA() : x.keyInA}?tenant_id=${x.cast.tenantA}`,
    }),
  },
  // Audit logs and security settings (document 2, Governance and content)
  ...['/api/audit/logs', '/api/audit-logs', '/api/governance/audit-logs'].map(
    (p): Row => ({
      method: 'GET',
      path: p,
      rule: { kind: 'permission', p: 'view_audit_logs' },
      ok: 200,
      request: () => ({ path: p }),
    }),
  ),
  {
    method: 'GET',
    path: '/api/audit/logs/export',
    rule: { kind: 'permission', p: 'export_audit_logs' },
    ok: 200,
    request: () => ({ path: '/api/audit/logs/export?format=csv' }),
  },
  {
    method: 'GET',
    path: '/api/audit/user/<id>/activity',
    rule: { kind: 'permission_in_tenant_a', p: 'view_audit_logs' },
    ok: 200,
    request: (x) => ({ path: `/api/audit/user/${x.userInA}/activity` }),
  },
  {
    method: 'GET',
    path: '/api/security-settings',
    rule: { kind: 'system' },
    ok: 200,
    request: () => ({ path: '/api/security-settings' }),
  },
  {
    method: 'PUT',
    path: '/api/security-settings',
    rule: { kind: 'system' },
    ok: 200,
    request: () => ({ path: '/api/security-settings', body: { login_max_attempts: 5 } }),
  },
  // Last: it ends the caller's session.
  {
    method: 'POST',
    path: '/api/auth/logout',
    rule: { kind: 'session' },
    ok: 200,
    request: () => ({ path: '/api/auth/logout' }),
  },
];

before(async () => {
  app = await startTestApp();
  const cast = await buildCast(app);
  const victim = await createUser(app, cast.admin, { role: 'user', tenant_id: cast.tenantA });
  const writer = await createUser(app, cast.admin, { role: 'tenant_admin', tenant_id: cast.tenantA });
  f = {
    cast,
    userInA: victim.id,
    keyInA: 0,
    tenantC: await createTenant(app, cast.admin),
    keyWriter: await login(app.url, writer.username, writer.password),
  };
  f.keyInA = await newKeyInA();
});
after(() => app?.close());

const ACTOR_ORDER: ActorName[] = [
  'anonymous',
  'readonly',
  'user',
  'manager',
  'other_tenant_admin',
  'tenant_admin',
  'legacy_admin',
  'platform_admin',
];

test('every route x every role answers as the spec tables say', async () => {
  const failures: string[] = [];
  let checked = 0;
  for (const row of ROWS) {
    for (const name of ACTOR_ORDER) {
      const actor = f.cast.actors[name];
      const want = expected(row.rule, actor, row.ok);
      const req = await row.request(f, actor, want === row.ok);
      const got = await api(app.url, row.method, req.path, { auth: actor.session, body: req.body });
      checked++;
      if (got.status !== want)
        failures.push(
          `${row.method} ${row.path} as ${name}: expected ${want}, got ${got.status} ${JSON.stringify(got.body).slice(0, 160)}`,
        );
      else if (want >= 400)
        assert.equal(typeof got.body?.error, 'string', `${row.method} ${row.path} as ${name}: error body`);
    }
  }
  assert.deepEqual(failures, [], `${failures.length} of ${checked} cells differ`);
  assert.equal(checked, ROWS.length * ACTOR_ORDER.length);
});

test('the matrix covers every route the routers mount', async () => {
  // Routes of this issue (spec tables). A new route without a matrix row fails here.
  const covered = new Set(ROWS.map((r) => `${r.method} ${r.path.split('?')[0]}`));
  const specRoutes = [
    'POST /api/auth/logout',
    'GET /api/auth/check',
    'GET /api/auth/profile',
    'GET /api/auth/me',
    'POST /api/auth/change-password',
    'GET /api/password-policy',
    'GET /api/admin/users',
    'POST /api/admin/users',
    'PUT /api/admin/users/<id>',
    'DELETE /api/admin/users/<id>',
    'PUT /api/admin/users/<id>/password',
    'PUT /api/admin/users/<id>/quota',
    'GET /api/tenants',
    'POST /api/tenants',
    'GET /api/tenants/<id>',
    'GET /api/tenants/slug/<slug>',
    'PUT /api/tenants/<id>',
    'PUT /api/tenants/<id>/quota',
    'PUT /api/tenants/<id>/settings',
    'POST /api/tenants/<id>/suspend',
    'POST /api/tenants/<id>/activate',
    'POST /api/tenants/<id>/check-quota',
    'DELETE /api/tenants/<id>',
    'GET /api/tenants/<id>/usage',
    'GET /api/tenants/<id>/stats',
    'GET /api/tenants/plans',
    'GET /api/api-keys',
    'POST /api/api-keys',
    'PUT /api/api-keys/<id>',
    'DELETE /api/api-keys/<id>',
    'GET /api/audit/logs',
    'GET /api/audit-logs',
    'GET /api/governance/audit-logs',
    'GET /api/audit/logs/export',
    'GET /api/audit/user/<id>/activity',
    'GET /api/security-settings',
    'PUT /api/security-settings',
  ];
  assert.deepEqual(
    specRoutes.filter((r) => !covered.has(r)),
    [],
  );
});
