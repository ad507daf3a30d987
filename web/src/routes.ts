// THE route registry. A page is one line here plus its file under pages/<area>/. `nav` puts the route
// in the left navigation under that area (one entry per area: the first route of it that has `nav`);
// `admin: true` limits it to system administrators (every /manage/* path is admin-only anyway).
// Pages are loaded lazily: each is its own chunk. Page modules export the component as `default`;
// it receives the path parameters (":id") as props.
import type { ComponentType } from 'preact';

export type Area =
  | 'dashboard'
  | 'messages'
  | 'alerts'
  | 'prompts'
  | 'sessions'
  | 'remote'
  | 'autonomous'
  | 'reports'
  | 'manage';

export interface AppRoute {
  /** preact-iso pattern: "/sessions/:id", "/manage/*". */
  path: string;
  /** Shown in the nav and as the document title. */
  title: string;
  load: () => Promise<{ default: ComponentType<any> }>;
  nav?: Area;
  admin?: true;
  /** When set, the nav entry is only for these roles (system administrators always see it). */
  roles?: readonly string[];
}

/** Roles whose permissions hold view_analysis (usage report, costs: /api/usage/report, /api/roi). */
export const REPORT_ROLES: readonly string[] = ['admin', 'platform_admin', 'tenant_admin', 'manager', 'user'];

export const routes: AppRoute[] = [
  { path: '/', title: 'Dashboard', nav: 'dashboard', load: () => import('./pages/dashboard/index.tsx') },
  { path: '/messages', title: 'Messages', nav: 'messages', load: () => import('./pages/messages/index.tsx') },
  { path: '/api-docs', title: 'API reference', load: () => import('./pages/api-docs/index.tsx') },
  { path: '/upload-tokens', title: 'Upload tokens', load: () => import('./pages/upload-tokens/index.tsx') },
  {
    path: '/messages/conversations',
    title: 'Conversations',
    load: () => import('./pages/messages/conversations.tsx'),
  },
  {
    path: '/messages/conversations/:id',
    title: 'Conversation',
    load: () => import('./pages/messages/timeline.tsx'),
  },
  { path: '/alerts', title: 'Alerts', nav: 'alerts', load: () => import('./pages/alerts/index.tsx') },
  { path: '/prompts', title: 'Prompts', nav: 'prompts', load: () => import('./pages/prompts/index.tsx') },
  { path: '/prompts/new', title: 'New prompt template', load: () => import('./pages/prompts/editor.tsx') },
  { path: '/prompts/:id', title: 'Prompt template', load: () => import('./pages/prompts/editor.tsx') },
  { path: '/sessions', title: 'Sessions', nav: 'sessions', load: () => import('./pages/sessions/index.tsx') },
  { path: '/sessions/:id', title: 'Session', load: () => import('./pages/sessions/detail.tsx') },
  {
    path: '/remote',
    title: 'Remote workspace',
    nav: 'remote',
    load: () => import('./pages/remote/index.tsx'),
  },
  { path: '/remote/sessions/:id', title: 'Remote session', load: () => import('./pages/remote/session.tsx') },
  {
    path: '/remote/sessions/:id/terminal',
    title: 'Terminal',
    load: () => import('./pages/remote/terminal.tsx'),
  },
  {
    path: '/autonomous',
    title: 'Autonomous development',
    nav: 'autonomous',
    load: () => import('./pages/autonomous/index.tsx'),
  },
  { path: '/autonomous/new', title: 'New workflow', load: () => import('./pages/autonomous/new.tsx') },
  { path: '/autonomous/:id', title: 'Workflow', load: () => import('./pages/autonomous/detail.tsx') },
  {
    path: '/autonomous/:id/milestones/:mid',
    title: 'Milestone',
    load: () => import('./pages/autonomous/milestone.tsx'),
  },
  {
    path: '/reports/usage',
    title: 'Usage report',
    nav: 'reports',
    roles: REPORT_ROLES,
    load: () => import('./pages/reports/usage.tsx'),
  },
  {
    path: '/manage',
    title: 'Administration',
    nav: 'manage',
    admin: true,
    load: () => import('./pages/manage/index.tsx'),
  },
  { path: '/manage/users', title: 'Users', admin: true, load: () => import('./pages/manage/users.tsx') },
  {
    path: '/manage/tenants',
    title: 'Tenants',
    admin: true,
    load: () => import('./pages/manage/tenants.tsx'),
  },
  {
    path: '/manage/machines',
    title: 'Machines',
    admin: true,
    load: () => import('./pages/manage/machines.tsx'),
  },
  {
    path: '/manage/keys',
    title: 'Provider keys',
    admin: true,
    load: () => import('./pages/manage/keys.tsx'),
  },
  { path: '/manage/sso', title: 'Single sign-on', admin: true, load: () => import('./pages/manage/sso.tsx') },
  {
    path: '/manage/filters',
    title: 'Filter rules',
    admin: true,
    load: () => import('./pages/manage/filters.tsx'),
  },
  {
    path: '/manage/security',
    title: 'Security settings',
    admin: true,
    load: () => import('./pages/manage/security.tsx'),
  },
  { path: '/manage/audit', title: 'Audit log', admin: true, load: () => import('./pages/manage/audit.tsx') },
  {
    path: '/manage/compliance',
    title: 'Compliance',
    admin: true,
    load: () => import('./pages/manage/compliance.tsx'),
  },
];

/** Every /manage path is for system administrators, registered or not. */
export const isAdminPath = (path: string) => path === '/manage' || path.startsWith('/manage/');

/**
 * The nav entries a user sees: one per area, admin areas only for system administrators, role-limited
 * entries only for their roles.
 */
export function navFor(isAdmin: boolean, role?: string): AppRoute[] {
  const seen = new Set<Area>();
  return routes.filter((r) => {
    if (!r.nav || seen.has(r.nav)) return false;
    if ((r.admin || isAdminPath(r.path)) && !isAdmin) return false;
    if (r.roles && !isAdmin && !r.roles.includes(role ?? '')) return false;
    seen.add(r.nav);
    return true;
  });
}
