// THE rule of which pages the signed-in user may open, pure (node imports it in
// test/unit/web-access.test.ts). It mirrors the API's guards (api/middleware/auth.ts and the routes):
// a page is offered only when the calls it makes would be answered, and the API still checks every
// call, so this decides what is shown, never what is allowed.
//   - system administrators (platform_admin, legacy admin): everything;
//   - administrators (also tenant_admin or holders of admin_access): their tenant's users, quotas,
//     stored provider keys, filter rules, audit log and compliance;
//   - holders of view_users / view_audit_logs (managers): the users list read-only, the audit log;
//   - machine administrators (an `admin` assignment on a machine): those machines and their users.

export interface Viewer {
  role: string;
  /** Effective permissions (GET /api/auth/check); admin_access passes every check. */
  permissions: readonly string[];
  /** An `admin` assignment on at least one machine (GET /api/remote/machines). */
  machineAdmin?: boolean;
}

export const isSystemAdmin = (v: Pick<Viewer, 'role'>) => v.role === 'platform_admin' || v.role === 'admin';

/** The API's hasPermission: admin_access passes every permission check. */
export const hasPermission = (v: Viewer, p: string) =>
  v.permissions.includes('admin_access') || v.permissions.includes(p);

/** The API's requireAdmin: system admin, tenant admin, or admin_access. */
export const isAdministrator = (v: Viewer) =>
  isSystemAdmin(v) || v.role === 'tenant_admin' || v.permissions.includes('admin_access');

/** Creating, editing and deleting users and setting their quotas (reading needs view_users only). */
export const mayManageUsers = isAdministrator;
/** GET /api/admin/users: view_users (managers), which administrators hold through admin_access. */
export const mayViewUsers = (v: Viewer) => isAdministrator(v) || hasPermission(v, 'view_users');
export const mayExportAudit = (v: Viewer) => hasPermission(v, 'export_audit_logs');
/** The usage report and estimated costs (/api/usage/report, /api/roi): view_analysis. */
export const mayViewReports = (v: Viewer) => hasPermission(v, 'view_analysis');

export interface ManageSection {
  path: string;
  title: string;
  /** What the section holds, for the /manage overview. */
  what: string;
  may: (v: Viewer) => boolean;
}

export const MANAGE_SECTIONS: readonly ManageSection[] = [
  {
    path: '/manage/users',
    title: 'Users',
    what: 'Users of your scope with their quotas; administrators create, edit and delete them.',
    may: mayViewUsers,
  },
  {
    path: '/manage/tenants',
    title: 'Tenants',
    what: 'Create tenants, set their quotas and settings, suspend and activate them.',
    may: isSystemAdmin,
  },
  {
    path: '/manage/machines',
    title: 'Machines',
    what: 'Registered machines and the users assigned to them (registration tokens: system administrators).',
    may: (v) => isSystemAdmin(v) || !!v.machineAdmin,
  },
  {
    path: '/manage/keys',
    title: 'Provider keys',
    what: "Stored model provider keys (a tenant admin: its tenant's): add (write-only), deactivate, delete.",
    may: isAdministrator,
  },
  {
    path: '/manage/sso',
    title: 'Single sign-on',
    what: 'Identity providers (OIDC, OAuth2, SAML): register, edit and disable.',
    may: isSystemAdmin,
  },
  {
    path: '/manage/filters',
    title: 'Filter rules',
    what: 'Content filter rules: keywords and patterns that warn, block or send to review.',
    may: isAdministrator,
  },
  {
    path: '/manage/security',
    title: 'Security settings',
    what: 'Login lockout, password policy and SSO account linking.',
    may: isSystemAdmin,
  },
  {
    path: '/manage/audit',
    title: 'Audit log',
    what: 'Administrative and remote actions of your scope, with filters and CSV or JSON export.',
    may: (v) => hasPermission(v, 'view_audit_logs'),
  },
  {
    path: '/manage/compliance',
    title: 'Compliance',
    what: 'Compliance reports, the security score and saved reports.',
    may: (v) => hasPermission(v, 'admin_access'),
  },
];

/** The administration pages `v` may open, in tab order. */
export const manageSectionsFor = (v: Viewer): ManageSection[] => MANAGE_SECTIONS.filter((s) => s.may(v));

const isManagePath = (path: string) => path === '/manage' || path.startsWith('/manage/');

/**
 * Whether `v` may open `path` of the app: /manage (the overview) with at least one section, a
 * section by its rule, /messages* with view_messages, /reports* with view_analysis; everything else is for any signed-in user
 * (unknown /manage paths too: the router answers "Page not found").
 */
export function mayOpen(v: Viewer, path: string): boolean {
  if (path === '/messages' || path.startsWith('/messages/')) return hasPermission(v, 'view_messages');
  if (path === '/reports' || path.startsWith('/reports/')) return mayViewReports(v);
  if (!isManagePath(path)) return true;
  if (path === '/manage' || path === '/manage/') return manageSectionsFor(v).length > 0;
  const section = MANAGE_SECTIONS.find((s) => path === s.path || path.startsWith(`${s.path}/`));
  return section ? section.may(v) : true;
}

/** What a page the user may not open says instead, in words. */
export const REFUSED_MESSAGE =
  'Your role does not give access to this page. Ask an administrator if you need it.';
