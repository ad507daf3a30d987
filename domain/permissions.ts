// Roles and permissions exactly as the spec's tables (document 1, "Roles and permissions").

export const ROLES = ['platform_admin', 'tenant_admin', 'manager', 'user', 'readonly'] as const;
/** `admin` is the legacy spelling of a system administrator; still accepted on stored users. */
export const LEGACY_ADMIN_ROLE = 'admin';
export type Role = (typeof ROLES)[number] | typeof LEGACY_ADMIN_ROLE;

export const PERMISSIONS = [
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
] as const;
export type Permission = (typeof PERMISSIONS)[number];

const MANAGER: Permission[] = [
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
];
const USER: Permission[] = ['view_dashboard', 'view_messages', 'view_analysis', 'view_quota'];
const READONLY: Permission[] = ['view_dashboard'];

/**
 * Role templates seeded into `role_permissions`. The spec lists admin (all 19), manager, user and
 * readonly; platform_admin and tenant_admin are administrators and get the admin template (tenant
 * scope, not permissions, is what limits a tenant admin).
 */
export const ROLE_TEMPLATES: Record<Role, readonly Permission[]> = {
  admin: PERMISSIONS,
  platform_admin: PERMISSIONS,
  tenant_admin: PERMISSIONS,
  manager: MANAGER,
  user: USER,
  readonly: READONLY,
};

export const isRole = (v: unknown): v is Role =>
  typeof v === 'string' && ((ROLES as readonly string[]).includes(v) || v === LEGACY_ADMIN_ROLE);
