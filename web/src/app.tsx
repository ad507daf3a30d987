// The shell: skip link, header (user, change password, logout), left nav from the route registry
// filtered by what the signed-in user may open (auth/access.ts; the "Alerts" entry carries the live
// unread badge: shell/unread-alerts-badge.tsx), and the main area where the router renders lazy pages.
// Public pages (/login) and the forced password change render without the shell. A page the user may
// not open (typed in or bookmarked) says so in words instead of loading (the API refuses it anyway).

import { useEffect, useMemo, useState } from 'preact/hooks';
import { ErrorBoundary, LocationProvider, lazy, Route, Router, useLocation } from 'preact-iso';
import { loginPathFor } from './api/client.ts';
import { mayOpen, REFUSED_MESSAGE } from './auth/access.ts';
import { ChangePasswordPage } from './auth/change-password-page.tsx';
import { LoginPage } from './auth/login-page.tsx';
import { AuthProvider, useAuth } from './auth/session.tsx';
import { CHUNK_RELOAD_KEY, routeFor, shouldReloadForChunk } from './route-match.ts';
import { navFor, routes } from './routes.ts';
import { MenuButton, NAV_ID } from './shell/menu-button.tsx';
import { UnreadAlertsBadge, UnreadAlertsProvider } from './shell/unread-alerts-badge.tsx';
import { Button, Loading } from './ui/index.ts';

function NotFound() {
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        There is no page at this address. <a href="/">Go to the dashboard</a>.
      </p>
    </section>
  );
}

function Refused() {
  return (
    <section>
      <h1>Not available to you</h1>
      <p role="alert">{REFUSED_MESSAGE}</p>
      <p>
        <a href="/">Go to the dashboard</a>.
      </p>
    </section>
  );
}

// A chunk that fails to load (a redeploy replaced the hashed files this page still names) reloads the
// page once for that path; a second failure there is left to the error boundary.
const loadOrReload = (load: () => Promise<{ default: any }>) => () =>
  load().catch((err) => {
    const path = window.location.pathname;
    if (shouldReloadForChunk(sessionStorage.getItem(CHUNK_RELOAD_KEY), path)) {
      sessionStorage.setItem(CHUNK_RELOAD_KEY, path);
      window.location.reload();
    }
    throw err;
  });
const lazyRoutes = routes.map((r) => ({ ...r, component: lazy(loadOrReload(r.load)) }));

function Shell() {
  const { user, viewer, logout } = useAuth();
  const { path, url, route } = useLocation();
  const nav = useMemo(() => (viewer ? navFor(viewer) : []), [viewer]);
  const refused = !!viewer && !mayOpen(viewer, path);
  // The narrow-screen menu (shell/menu-button.tsx) closes on every navigation.
  const [navOpen, setNavOpen] = useState(false);
  useEffect(() => {
    if (path) setNavOpen(false);
  }, [path]);

  const redirect =
    user === null
      ? loginPathFor(url)
      : user?.must_change_password
        ? `/change-password?next=${encodeURIComponent(url)}`
        : null;
  useEffect(() => {
    if (redirect) route(redirect, true);
  }, [redirect, route]);

  useEffect(() => {
    const r = routeFor(routes, path);
    document.title = r ? `${r.title} · svc` : 'svc';
  }, [path]);

  if (user === undefined || user === null || !viewer || redirect) return <Loading />;

  const onLogout = async () => {
    await logout();
    route('/login');
  };

  return (
    <UnreadAlertsProvider>
      <div class="shell">
        <a class="skip-link" href="#main">
          Skip to content
        </a>
        <header class="app-header">
          <MenuButton open={navOpen} onToggle={setNavOpen} />
          <a class="brand" href="/">
            svc
          </a>
          <div class="user">
            <span class="user-name">{user.username}</span>
            <span class="user-role">{user.role}</span>
            <a href="/api-docs">API reference</a>
            <a href="/upload-tokens">Upload tokens</a>
            <a href="/gateway-keys">Gateway keys</a>
            <a href={`/change-password?next=${encodeURIComponent(url)}`}>Change password</a>
            <Button variant="link" onClick={onLogout}>
              Log out
            </Button>
          </div>
        </header>
        <nav id={NAV_ID} class={navOpen ? 'app-nav open' : 'app-nav'} aria-label="Main">
          <ul>
            {nav.map((r) => {
              const active = r.path === '/' ? path === '/' : path === r.path || path.startsWith(`${r.path}/`);
              return (
                <li key={r.path}>
                  {/* A link to the page already shown changes no path: the click closes the menu too. */}
                  <a
                    href={r.path}
                    aria-current={active ? 'page' : undefined}
                    onClick={() => setNavOpen(false)}
                  >
                    {r.title}
                    {r.nav === 'alerts' && <UnreadAlertsBadge />}
                  </a>
                </li>
              );
            })}
          </ul>
        </nav>
        <main id="main" class="app-main" tabIndex={-1}>
          {refused ? (
            <Refused />
          ) : (
            <ErrorBoundary>
              <Router>
                {[
                  ...lazyRoutes.map((r) => <Route key={r.path} path={r.path} component={r.component} />),
                  <Route key="404" default component={NotFound} />,
                ]}
              </Router>
            </ErrorBoundary>
          )}
        </main>
      </div>
    </UnreadAlertsProvider>
  );
}

function Pages() {
  const { path } = useLocation();
  if (path === '/login') return <LoginPage />;
  if (path === '/change-password') return <ChangePasswordPage />;
  return <Shell />;
}

// Links to /api/* (the SSO provider buttons: a server redirect to the identity provider) are server
// URLs, never app routes: the router leaves them to the browser.
const APP_LINKS = /^(?!\/api\/)/;

export function App() {
  return (
    <LocationProvider scope={APP_LINKS}>
      <AuthProvider>
        <Pages />
      </AuthProvider>
    </LocationProvider>
  );
}
