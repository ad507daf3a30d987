// Which pages the web app offers each role (web/src/auth/access.ts), checked against the spec's
// permission sets (document 1, "Roles and permissions") and the API's guards the rule mirrors.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ROLE_TEMPLATES, type Role } from '../../domain/permissions.ts';
import {
  manageSectionsFor,
  mayExportAudit,
  mayManageUsers,
  mayOpen,
  type Viewer,
} from '../../web/src/auth/access.ts';

const as = (role: Role, machineAdmin = false): Viewer => ({
  role,
  permissions: [...ROLE_TEMPLATES[role]],
  machineAdmin,
});
const sections = (v: Viewer) => manageSectionsFor(v).map((s) => s.path.slice('/manage/'.length));

test('a system administrator is offered every administration page', () => {
  for (const role of ['platform_admin', 'admin'] as const)
    assert.deepEqual(sections(as(role)), [
      'users',
      'tenants',
      'machines',
      'keys',
      'sso',
      'filters',
      'security',
      'audit',
      'compliance',
    ]);
});

test("a tenant admin: its tenant's users, keys, filters, audit and compliance; machines only as a machine admin", () => {
  assert.deepEqual(sections(as('tenant_admin')), ['users', 'keys', 'filters', 'audit', 'compliance']);
  assert.deepEqual(sections(as('tenant_admin', true)), [
    'users',
    'machines',
    'keys',
    'filters',
    'audit',
    'compliance',
  ]);
  assert.equal(mayManageUsers(as('tenant_admin')), true);
  for (const p of ['/manage/tenants', '/manage/sso', '/manage/security'])
    assert.equal(mayOpen(as('tenant_admin'), p), false, p);
});

test('a manager: the users list read-only and the audit log with export, nothing else', () => {
  const m = as('manager');
  assert.deepEqual(sections(m), ['users', 'audit']);
  assert.equal(mayManageUsers(m), false);
  assert.equal(mayExportAudit(m), true);
  assert.equal(mayOpen(m, '/manage'), true);
  assert.equal(mayOpen(m, '/manage/filters'), false, 'view_content_filter alone does not open the rules');
});

test('users and readonly users get no administration unless a machine names them its administrator', () => {
  for (const role of ['user', 'readonly'] as const) {
    assert.deepEqual(sections(as(role)), []);
    assert.equal(mayOpen(as(role), '/manage'), false);
    assert.equal(mayOpen(as(role), '/manage/users'), false);
    assert.deepEqual(sections(as(role, true)), ['machines']);
  }
});

test('the main pages: messages need view_messages, the usage report view_analysis; admin_access passes every check', () => {
  assert.equal(mayOpen(as('readonly'), '/messages'), false);
  assert.equal(mayOpen(as('readonly'), '/reports/usage'), false);
  for (const role of ['user', 'manager', 'tenant_admin', 'platform_admin'] as const)
    assert.equal(mayOpen(as(role), '/reports/usage'), true, role);
  assert.equal(mayOpen(as('readonly'), '/messages/conversations/x'), false);
  assert.equal(mayOpen(as('user'), '/messages'), true);
  assert.equal(mayOpen(as('readonly'), '/'), true);
  const extra: Viewer = { role: 'user', permissions: ['admin_access'] };
  assert.equal(mayOpen(extra, '/manage/users'), true);
  assert.equal(mayManageUsers(extra), true);
  // An unknown /manage path is the router's "Page not found", not a refusal.
  assert.equal(mayOpen(as('readonly'), '/manage/nothing-here'), true);
});
