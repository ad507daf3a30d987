// Shared by the workspace tests (prompts, sessions): a logged-in user whose tenant was removed after
// login (a login without a tenant is refused, so this is how a tenantless caller is reached).
import assert from 'node:assert/strict';
import { type Cast, createUser, PASSWORD } from '../support/actors.ts';
import type { TestApp } from '../support/harness.ts';
import { api, login, type Session } from '../support/session.ts';

export async function sessionWithoutTenant(app: TestApp, cast: Cast): Promise<Session> {
  const u = await createUser(app, cast.admin, { role: 'user', tenant_id: cast.tenantA });
  const session = await login(app.url, u.username, PASSWORD);
  const r = await api(app.url, 'PUT', `/api/admin/users/${u.id}`, {
    auth: cast.admin,
    body: { tenant_id: null },
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return session;
}
