// /login: username and password (POST /api/auth/login), plus one button per SSO provider the API
// lists publicly (GET /api/sso/providers; `?tenant=<slug>` shows that tenant's providers). After
// login: the forced password change when the API demands it, else the page the user came from.
// A refused SSO login lands here as `?sso_error=<code>`: its words, and the tenant's buttons again.

import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ssoErrorWords } from '../../../domain/sso/browser-errors.ts';
import { api, errorText, safeNext } from '../api/client.ts';
import { Button, ErrorBox, Field } from '../ui/index.ts';
import { useAuth } from './session.tsx';

interface Provider {
  name: string;
  provider_type: string;
  login_url: string;
}

const TENANT_KEY = 'svc.login.tenant';

function rememberTenant(slug: string) {
  try {
    sessionStorage.setItem(TENANT_KEY, slug.slice(0, 100));
  } catch {}
}

function rememberedTenant(): string | undefined {
  try {
    return sessionStorage.getItem(TENANT_KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

export function LoginPage() {
  const { query, route } = useLocation();
  const { refresh } = useAuth();
  const next = safeNext(query.next);
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  // A refused single sign-on comes back here as ?sso_error=<code> (api/routes/sso/browser-refusal.ts).
  const [error, setError] = useState<string | null>(() => ssoErrorWords(query.sso_error));
  const [busy, setBusy] = useState(false);
  const [providers, setProviders] = useState<Provider[]>([]);

  // The tenant whose providers are shown; a refused SSO login comes back without `?tenant=`, so the
  // one the login started from (kept for this tab) is offered again to retry.
  const tenant = query.tenant ?? (query.sso_error ? rememberedTenant() : undefined);
  useEffect(() => {
    if (query.tenant) rememberTenant(query.tenant);
    api
      .get<{ providers: Provider[] }>('/api/sso/providers', {
        query: { tenant },
        noRedirect: true,
      })
      .then((r) => setProviders(r.providers))
      .catch(() => setProviders([]));
  }, [tenant, query.tenant]);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const r = await api.post<{ user: { must_change_password: boolean } }>(
        '/api/auth/login',
        { username, password },
        { noRedirect: true },
      );
      await refresh();
      if (r.user.must_change_password) route(`/change-password?next=${encodeURIComponent(next)}`);
      else route(next);
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  };

  return (
    <main id="main" class="auth-page">
      <form class="auth-card" onSubmit={submit} aria-labelledby="login-title">
        <h1 id="login-title">Sign in</h1>
        <ErrorBox error={error} />
        <Field
          label="Username"
          name="username"
          value={username}
          onValue={setUsername}
          autoComplete="username"
          required
        />
        <Field
          label="Password"
          name="password"
          type="password"
          value={password}
          onValue={setPassword}
          autoComplete="current-password"
          required
        />
        <Button type="submit" variant="primary" busy={busy}>
          Sign in
        </Button>
        {providers.length > 0 && (
          <div class="sso">
            <p class="muted">Or sign in with</p>
            {providers.map((p) => (
              <a
                key={p.name}
                class="btn btn-secondary"
                href={`${p.login_url}?return_to=${encodeURIComponent(next)}`}
              >
                {p.name}
              </a>
            ))}
          </div>
        )}
      </form>
    </main>
  );
}
