// A cast of logged-in users for access tests: every role of the spec in tenant A, the legacy `admin`
// role (created in the database: the API no longer hands it out), and a tenant admin of tenant B.
import { usersRepository } from '../../db/repositories/users.ts';
import { hashPassword } from '../../domain/passwords.ts';
import { ADMIN, type TestApp } from './harness.ts';
import { api, login, type Session } from './session.ts';

export const PASSWORD = 'actor-password-123';

export type ActorName =
  | 'anonymous'
  | 'platform_admin'
  | 'legacy_admin'
  | 'tenant_admin'
  | 'manager'
  | 'user'
  | 'readonly'
  | 'other_tenant_admin';

export interface Actor {
  name: ActorName;
  role: string | null;
  /** 'A', 'B' or null (global). */
  tenant: 'A' | 'B' | null;
  session?: Session;
  id?: number;
}

export interface Cast {
  admin: Session;
  tenantA: number;
  tenantB: number;
  actors: Record<ActorName, Actor>;
}

let seq = 0;
export const uniqueName = (prefix: string) => `${prefix}-${process.pid}-${Date.now().toString(36)}-${++seq}`;

export async function createTenant(
  app: Pick<TestApp, 'url'>,
  admin: Session,
  name = uniqueName('tenant'),
): Promise<number> {
  const r = await api(app.url, 'POST', '/api/tenants', {
    auth: admin,
    body: { name, slug: name.toLowerCase() },
  });
  if (r.status !== 201) throw new Error(`create tenant: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.tenant.id;
}

export async function createUser(
  app: Pick<TestApp, 'url'>,
  admin: Session,
  opts: {
    username?: string;
    role: string;
    tenant_id?: number | null;
    password?: string;
    must_change_password?: boolean;
  },
): Promise<{ id: number; username: string; password: string }> {
  const username = opts.username ?? uniqueName(opts.role);
  const password = opts.password ?? PASSWORD;
  const r = await api(app.url, 'POST', '/api/admin/users', {
    auth: admin,
    body: {
      username,
      password,
      role: opts.role,
      tenant_id: opts.tenant_id,
      email: `${username}@example.test`,
      must_change_password: opts.must_change_password,
    },
  });
  if (r.status !== 201) throw new Error(`create user ${username}: ${r.status} ${JSON.stringify(r.body)}`);
  return { id: r.body.user_id, username, password };
}

export async function buildCast(app: TestApp): Promise<Cast> {
  const admin = await login(app.url, ADMIN.username, ADMIN.password);
  const tenantA = await createTenant(app, admin);
  const tenantB = await createTenant(app, admin);
  const legacyName = uniqueName('legacy');
  await usersRepository(app.database).create({
    username: legacyName,
    passwordHash: await hashPassword(PASSWORD),
    role: 'admin',
    isAdmin: true,
    tenantId: null,
  });
  const specs: [ActorName, string, 'A' | 'B'][] = [
    ['tenant_admin', 'tenant_admin', 'A'],
    ['manager', 'manager', 'A'],
    ['user', 'user', 'A'],
    ['readonly', 'readonly', 'A'],
    ['other_tenant_admin', 'tenant_admin', 'B'],
  ];
  const created = await Promise.all(
    specs.map(([, role, t]) => createUser(app, admin, { role, tenant_id: t === 'A' ? tenantA : tenantB })),
  );
  const actors = {
    anonymous: { name: 'anonymous', role: null, tenant: null },
    platform_admin: {
      name: 'platform_admin',
      role: 'platform_admin',
      tenant: null,
      session: admin,
      id: admin.user.id,
    },
    legacy_admin: {
      name: 'legacy_admin',
      role: 'admin',
      tenant: null,
      session: await login(app.url, legacyName, PASSWORD),
    },
  } as Record<ActorName, Actor>;
  actors.legacy_admin.id = actors.legacy_admin.session!.user.id;
  await Promise.all(
    specs.map(async ([name, role, tenant], i) => {
      const session = await login(app.url, created[i]!.username, PASSWORD);
      actors[name] = { name, role, tenant, session, id: created[i]!.id };
    }),
  );
  return { admin, tenantA, tenantB, actors };
}
