// Pure access rules: role templates against the spec table, permission checks, ownership, the
// password-change allowlist, the tenant-key decision, lockout arithmetic and the password policy.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  allowedWhilePasswordChangeRequired,
  canAccessOwned,
  canAdministerMachine,
  effectivePermissions,
  hasPermission,
  isAdministrator,
  isSystemAdmin,
  userManagementRefusal,
} from '../../domain/access.ts';
import { lockAfterFailure, lockedUntil } from '../../domain/login-lockout.ts';
import { passwordPolicy, passwordProblem } from '../../domain/password-policy.ts';
import { PERMISSIONS, ROLE_TEMPLATES } from '../../domain/permissions.ts';
import { parseTenantIdParam, readScope, resolveKeyTenant } from '../../domain/tenant-scope.ts';

describe('role templates (document 1, Roles and permissions)', () => {
  test('19 permissions; admin all 19, manager 11, user 4, readonly 1, exactly as listed', () => {
    assert.equal(PERMISSIONS.length, 19);
    assert.equal(new Set(PERMISSIONS).size, 19);
    assert.deepEqual([...ROLE_TEMPLATES.admin].sort(), [...PERMISSIONS].sort());
    assert.deepEqual(
      [...ROLE_TEMPLATES.manager].sort(),
      [
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
      ].sort(),
    );
    assert.deepEqual([...ROLE_TEMPLATES.user].sort(), [
      'view_analysis',
      'view_dashboard',
      'view_messages',
      'view_quota',
    ]);
    assert.deepEqual([...ROLE_TEMPLATES.readonly], ['view_dashboard']);
  });

  test('extras merge with the template; unknown names are dropped; admin_access passes every check', () => {
    const p = effectivePermissions('readonly', ['view_quota', 'fly_to_the_moon']);
    assert.deepEqual([...p].sort(), ['view_dashboard', 'view_quota']);
    assert.equal(hasPermission(p, 'view_quota'), true);
    assert.equal(hasPermission(p, 'manage_quota'), false);
    const holder = effectivePermissions('readonly', ['admin_access']);
    for (const x of PERMISSIONS) assert.equal(hasPermission(holder, x), true, x);
    assert.equal(effectivePermissions('nonsense', []).size, 0);
  });
});

describe('who is an administrator', () => {
  const none = new Set<string>();
  test('system admin: platform_admin and legacy admin only', () => {
    assert.deepEqual(
      ['platform_admin', 'admin', 'tenant_admin', 'manager', 'user', 'readonly'].map((role) =>
        isSystemAdmin({ role }),
      ),
      [true, true, false, false, false, false],
    );
  });
  test('administrator: system admins, tenant admins, holders of admin_access', () => {
    assert.equal(isAdministrator({ role: 'tenant_admin' }, none), true);
    assert.equal(isAdministrator({ role: 'manager' }, none), false);
    assert.equal(isAdministrator({ role: 'user' }, new Set(['admin_access'])), true);
  });
  test('ownership: owner, system admin, tenant admin within its tenant; machine admin', () => {
    const owner = { id: 7, role: 'user', tenantId: 1 };
    assert.equal(canAccessOwned(owner, 7), true);
    assert.equal(canAccessOwned(owner, 8), false);
    assert.equal(canAccessOwned({ id: 1, role: 'platform_admin', tenantId: null }, 8), true);
    assert.equal(canAccessOwned({ id: 2, role: 'tenant_admin', tenantId: 1 }, 8, 1), true);
    assert.equal(canAccessOwned({ id: 2, role: 'tenant_admin', tenantId: 1 }, 8, 2), false);
    assert.equal(canAdministerMachine(owner, 'admin'), true);
    assert.equal(canAdministerMachine(owner, 'user'), false);
    assert.equal(canAdministerMachine({ id: 1, role: 'admin', tenantId: null }, null), true);
  });
  test('user management reach', () => {
    const ta = { id: 2, role: 'tenant_admin', tenantId: 1 };
    assert.equal(userManagementRefusal(ta, { role: 'user', tenantId: 1 }), null);
    assert.equal(userManagementRefusal(ta, { role: 'user', tenantId: 2 }), 'Cross-tenant access denied');
    assert.match(userManagementRefusal(ta, { role: 'platform_admin', tenantId: 1 })!, /system administrator/);
    assert.equal(
      userManagementRefusal(
        { id: 1, role: 'platform_admin', tenantId: null },
        { role: 'admin', tenantId: null },
      ),
      null,
    );
  });
});

test('password-change allowlist: exactly the six endpoints', () => {
  const allowed = [
    ['GET', '/api/auth/check'],
    ['GET', '/api/auth/me'],
    ['GET', '/api/auth/profile'],
    ['POST', '/api/auth/change-password'],
    ['POST', '/api/auth/logout'],
    ['GET', '/api/password-policy'],
  ];
  for (const [m, p] of allowed) assert.equal(allowedWhilePasswordChangeRequired(m!, p!), true, `${m} ${p}`);
  for (const [m, p] of [
    ['POST', '/api/auth/me'],
    ['GET', '/api/auth/change-password'],
    ['GET', '/api/admin/users'],
    ['GET', '/api/auth/me/x'],
    ['GET', '/api/auth'],
  ])
    assert.equal(allowedWhilePasswordChangeRequired(m!, p!), false, `${m} ${p}`);
});

describe('tenant scope', () => {
  test('read scope: system admins all, others their tenant, no tenant nothing', () => {
    assert.deepEqual(readScope({ role: 'admin', tenantId: 3 }), { kind: 'all' });
    assert.deepEqual(readScope({ role: 'manager', tenantId: 3 }), { kind: 'tenant', tenantId: 3 });
    assert.deepEqual(readScope({ role: 'tenant_admin', tenantId: null }), { kind: 'none' });
  });
  test('tenant_id parsing never guesses', () => {
    assert.equal(parseTenantIdParam(undefined), undefined);
    assert.equal(parseTenantIdParam(null), undefined);
    assert.equal(parseTenantIdParam('12'), 12);
    assert.equal(parseTenantIdParam(12), 12);
    for (const bad of [
      '',
      '0',
      '-1',
      '1.0',
      ' 1',
      '1e1',
      '0x10',
      'abc',
      0,
      -2,
      1.5,
      Number.NaN,
      '2147483648',
      ['1'],
      {},
      true,
    ])
      assert.equal(parseTenantIdParam(bad), 'invalid', JSON.stringify(bad));
  });
  test('the key rules table', () => {
    const none = new Set<string>();
    const ta = { role: 'tenant_admin', tenantId: 4 };
    assert.deepEqual(resolveKeyTenant(ta, none, undefined), { tenantId: 4, crossTenant: false });
    assert.deepEqual(resolveKeyTenant(ta, none, '4'), { tenantId: 4, crossTenant: false });
    assert.throws(() => resolveKeyTenant(ta, none, '5'), {
      status: 403,
      message: 'Cross-tenant access denied',
    });
    assert.throws(() => resolveKeyTenant({ role: 'tenant_admin', tenantId: null }, none, '5'), {
      status: 403,
      message: 'Tenant admin must have tenant_id',
    });
    const pa = { role: 'platform_admin', tenantId: null };
    assert.throws(() => resolveKeyTenant(pa, none, undefined), {
      status: 400,
      message: 'Target tenant_id is required',
    });
    assert.throws(() => resolveKeyTenant(pa, none, '-3'), { status: 400, message: 'Invalid tenant_id' });
    assert.deepEqual(resolveKeyTenant(pa, none, '9'), { tenantId: 9, crossTenant: true });
    assert.deepEqual(resolveKeyTenant({ role: 'admin', tenantId: 9 }, none, 9), {
      tenantId: 9,
      crossTenant: false,
    });
    assert.throws(() => resolveKeyTenant({ role: 'manager', tenantId: 4 }, none, '4'), { status: 403 });
  });
});

describe('lockout arithmetic', () => {
  const policy = { maxAttempts: 5, lockoutMinutes: 15 };
  const t0 = new Date('2026-01-01T00:00:00Z');
  const at = (min: number) => new Date(t0.getTime() + min * 60_000);
  test('locks on the 5th failure for 15 minutes', () => {
    assert.equal(lockAfterFailure(4, t0, policy), null);
    assert.deepEqual(lockAfterFailure(5, t0, policy), at(15));
    const state = { attemptCount: 5, lockedUntil: at(15), lastAttemptAt: t0 };
    assert.deepEqual(lockedUntil(state, at(14.9)), at(15));
    assert.equal(lockedUntil(state, at(15)), null);
  });
});

test('password policy', () => {
  const p = passwordPolicy(12);
  assert.equal(passwordProblem(p, 'alice', 'a'.repeat(11)), 'Password must be at least 12 characters long');
  assert.equal(passwordProblem(p, 'alice', 'a'.repeat(12)), null);
  assert.equal(
    passwordProblem(p, 'AliceWonderland', 'alicewonderland'),
    'Password must not be the same as the username',
  );
  assert.match(passwordProblem(p, 'alice', 'a'.repeat(129))!, /at most 128/);
});
