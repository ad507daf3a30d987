// Helpers of the org-sync integration tests: the fake org both platforms serve, starting a sync over
// HTTP and waiting for its workflow, and the synced state of a tenant read straight from the database
// (teams, linked users and memberships keyed by platform ids, so two platforms compare directly).
import assert from 'node:assert/strict';
import { type FakeOrg, ROOT } from '../../fixtures/chatplat-org.ts';
import type { TestApp } from '../../support/harness.ts';
import { api, type Session } from '../../support/session.ts';

export const baseOrg = (): FakeOrg => ({
  departments: [
    { id: '100', name: 'Engineering', parentId: ROOT, chatId: 'chat-eng' },
    { id: '101', name: 'Backend', parentId: '100' },
    { id: '102', name: 'Frontend', parentId: '100' },
    { id: '200', name: 'Sales', parentId: ROOT },
  ],
  users: [
    { id: 'u1', name: 'Ann', email: 'ann@corp.test', mobile: '13800000001', departmentIds: ['100'] },
    { id: 'u2', name: 'Ben', email: null, mobile: null, departmentIds: ['101'] },
    { id: 'u3', name: 'Cai', email: 'cai@corp.test', mobile: null, departmentIds: ['101', '200'] },
    { id: 'u4', name: 'Dee', email: 'dee@corp.test', mobile: null, departmentIds: ['200'] },
    { id: 'u5', name: 'Eve', email: 'eve@corp.test', mobile: null, departmentIds: ['102'] },
    { id: 'u6', name: 'Root Person', email: 'root.person@corp.test', mobile: null, departmentIds: [ROOT] },
  ],
});

export interface SyncAnswer {
  status: number;
  body: any;
  bodies: unknown[];
}

/** POST .../sync, wait for the workflow, GET the run; every answer body is kept (secret checks). */
export async function runSync(
  app: TestApp,
  auth: Session,
  platform: 'chatplat_a' | 'chatplat_b',
  tenantId: number,
): Promise<SyncAnswer> {
  const started = await api(app.url, 'POST', `/api/admin/${platform}/sync`, {
    auth,
    body: { tenant_id: tenantId },
  });
  assert.equal(started.status, 202, JSON.stringify(started.body));
  assert.deepEqual(Object.keys(started.body).sort(), ['platform', 'run_id', 'tenant_id']);
  const client = await app.deps.temporal.client();
  await client.workflow.getHandle(started.body.run_id).result();
  const run = await api(app.url, 'GET', `/api/admin/${platform}/sync/${started.body.run_id}`, { auth });
  assert.equal(run.status, 200);
  return { status: run.status, body: run.body, bodies: [started.body, run.body] };
}

const q = (app: TestApp, text: string, params: unknown[]) =>
  app.database.sql.query<Record<string, unknown>>(text, params);

/** The tenant's synced state of one platform, in platform ids. */
export async function orgState(app: TestApp, tenantId: number, platform: string) {
  const teams = (
    await q(
      app,
      'SELECT external_id, name, parent_external_id, is_active FROM teams WHERE tenant_id = ? AND managed_by = ? ORDER BY external_id',
      [tenantId, platform],
    )
  ).map((r) => [r.external_id, r.name, r.parent_external_id, Boolean(r.is_active)]);
  const users = (
    await q(
      app,
      `SELECT i.provider_user_id AS pid, u.username, u.email, u.role, u.is_active, u.deleted_at
         FROM sso_identities i JOIN users u ON u.id = i.user_id
        WHERE i.provider_name = ? AND u.tenant_id = ? ORDER BY i.provider_user_id`,
      [platform, tenantId],
    )
  ).map((r) => ({
    pid: r.pid as string,
    username: r.username as string,
    email: r.email == null ? null : String(r.email).toLowerCase(),
    role: r.role,
    active: Boolean(r.is_active) && r.deleted_at == null,
  }));
  const memberships = (
    await q(
      app,
      `SELECT t.external_id, i.provider_user_id AS pid, m.managed_by
         FROM team_members m JOIN teams t ON t.id = m.team_id
         JOIN sso_identities i ON i.user_id = m.user_id AND i.provider_name = ?
        WHERE t.tenant_id = ? AND t.managed_by = ? ORDER BY t.external_id, i.provider_user_id`,
      [platform, tenantId, platform],
    )
  ).map((r) => `${r.external_id}:${r.pid}:${r.managed_by ?? 'local'}`);
  return { teams, users, memberships };
}
