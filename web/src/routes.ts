// THE route registry. A page is one line here plus its file under pages/<area>/. `nav` puts the route
// in the left navigation under that area (one entry per area: the first route of it that has `nav`).
// Who may open which page is decided in one place, auth/access.ts (mayOpen): the nav offers only those.
// Pages are loaded lazily: each is its own chunk. Page modules export the component as `default`;
// it receives the path parameters (":id") as props.
import type { ComponentType } from 'preact';
import { mayOpen, type Viewer } from './auth/access.ts';

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
}

export const routes: AppRoute[] = [
  { path: '/', title: 'Dashboard', nav: 'dashboard', load: () => import('./pages/dashboard/index.tsx') },
  { path: '/messages', title: 'Messages', nav: 'messages', load: () => import('./pages/messages/index.tsx') },
  { path: '/api-docs', title: 'API reference', load: () => import('./pages/api-docs/index.tsx') },
  { path: '/upload-tokens', title: 'Upload tokens', load: () => import('./pages/upload-tokens/index.tsx') },
  { path: '/gateway-keys', title: 'Gateway keys', load: () => import('./pages/gateway-keys/index.tsx') },
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
    load: () => import('./pages/reports/usage.tsx'),
  },
  {
    path: '/manage',
    title: 'Administration',
    nav: 'manage',
    load: () => import('./pages/manage/index.tsx'),
  },
  { path: '/manage/users', title: 'Users', load: () => import('./pages/manage/users.tsx') },
  {
    path: '/manage/tenants',
    title: 'Tenants',
    load: () => import('./pages/manage/tenants.tsx'),
  },
  {
    path: '/manage/machines',
    title: 'Machines',
    load: () => import('./pages/manage/machines.tsx'),
  },
  {
    path: '/manage/keys',
    title: 'Provider keys',
    load: () => import('./pages/manage/keys.tsx'),
  },
  { path: '/manage/sso', title: 'Single sign-on', load: () => import('./pages/manage/sso.tsx') },
  {
    path: '/manage/filters',
    title: 'Filter rules',
    load: () => import('./pages/manage/filters.tsx'),
  },
  {
    path: '/manage/security',
    title: 'Security settings',
    load: () => import('./pages/manage/security.tsx'),
  },
  { path: '/manage/audit', title: 'Audit log', load: () => import('./pages/manage/audit.tsx') },
  {
    path: '/manage/compliance',
    title: 'Compliance',
    load: () => import('./pages/manage/compliance.tsx'),
  },
];

/** The nav entries `viewer` sees: one per area, only areas whose first page the viewer may open. */
export function navFor(viewer: Viewer): AppRoute[] {
  const seen = new Set<Area>();
  return routes.filter((r) => {
    if (!r.nav || seen.has(r.nav)) return false;
    if (!mayOpen(viewer, r.path)) return false;
    seen.add(r.nav);
    return true;
  });
}
