// /manage/sso: the active identity providers (GET /api/sso/providers: public fields only), register
// one (POST /api/sso/providers: OIDC, OAuth2 or SAML; the client secret is write-only and never read
// back), and disable one (DELETE, confirmed). The API has no edit: to change a provider, disable it and
// register a new one (names are never reused).
import { useState } from 'preact/hooks';
import { api } from '../../api/client.ts';
import { CheckField } from '../../ui/check-field.tsx';
import { ConfirmButton } from '../../ui/confirm.tsx';
import { Button, ErrorBox, Field, Table } from '../../ui/index.ts';
import { Loaded } from '../../ui/loaded.tsx';
import { SelectField } from '../../ui/select-field.tsx';
import { TextareaField } from '../../ui/textarea-field.tsx';
import { useAction } from '../../ui/use-action.ts';
import { useSubmit } from '../../ui/use-submit.ts';
import { scopesOf, tenantIdOf } from './form-values.ts';
import { Done, ManagePage } from './layout.tsx';
import { tenantName, tenantOptions, useTenants } from './tenant-options.ts';
import type { SsoProvider } from './types.ts';
import { useResource } from './use-resource.ts';

type Kind = 'oidc' | 'oauth2' | 'saml';

function AddProvider({ onAdded }: { onAdded: (msg: string) => void }) {
  const tenants = useTenants();
  const [kind, setKind] = useState<Kind>('oidc');
  const [f, setF] = useState({
    name: '',
    tenant: '',
    issuer_url: '',
    client_id: '',
    client_secret: '',
    redirect_uri: `${window.location.origin}/api/sso/callback/`,
    scopes: 'openid email profile',
    authorization_url: '',
    token_url: '',
    userinfo_url: '',
    cert: '',
  });
  const [trustEmail, setTrustEmail] = useState(false);
  const set = (k: keyof typeof f) => (v: string) => setF({ ...f, [k]: v });

  const body = () => {
    const head = { name: f.name.trim(), provider_type: kind, tenant_id: tenantIdOf(f.tenant) ?? undefined };
    if (kind === 'saml')
      return {
        ...head,
        client_id: f.client_id,
        redirect_uri: f.redirect_uri,
        authorization_url: f.authorization_url || undefined,
        issuer_url: f.issuer_url || undefined,
        extra_params: { idp_x509_cert: f.cert || undefined },
      };
    const common = {
      ...head,
      client_id: f.client_id,
      client_secret: f.client_secret,
      redirect_uri: f.redirect_uri,
      scopes: scopesOf(f.scopes),
    };
    if (kind === 'oidc') return { ...common, issuer_url: f.issuer_url };
    return {
      ...common,
      authorization_url: f.authorization_url,
      token_url: f.token_url,
      userinfo_url: f.userinfo_url,
      trust_email: trustEmail,
    };
  };
  const { busy, error, submit } = useSubmit(async () => {
    const payload = body();
    setF((x) => ({ ...x, client_secret: '' }));
    await api.post('/api/sso/providers', payload);
    onAdded(`Provider ${payload.name} registered`);
    setF((x) => ({ ...x, name: '', client_id: '', cert: '' }));
  });
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="add-sso-h" autoComplete="off">
      <h2 id="add-sso-h">Register an identity provider</h2>
      <ErrorBox error={error} />
      <div class="form-grid">
        <Field
          label="Name"
          value={f.name}
          onValue={set('name')}
          required
          hint="Used in the login and callback URLs"
        />
        <SelectField
          label="Type"
          value={kind}
          onValue={(v) => setKind(v as Kind)}
          options={[
            { value: 'oidc', label: 'OpenID Connect' },
            { value: 'oauth2', label: 'OAuth 2' },
            { value: 'saml', label: 'SAML 2.0' },
          ]}
        />
        <SelectField
          label="Tenant"
          value={f.tenant}
          onValue={set('tenant')}
          options={tenantOptions(tenants.data, 'Platform-wide')}
        />
        <Field
          label={kind === 'saml' ? 'Service provider entity id' : 'Client id'}
          value={f.client_id}
          onValue={set('client_id')}
          required
        />
        {kind !== 'saml' && (
          <Field
            label="Client secret"
            type="password"
            value={f.client_secret}
            onValue={set('client_secret')}
            required
            autoComplete="new-password"
            hint="Write-only: stored encrypted, never shown"
          />
        )}
        <Field
          label={kind === 'saml' ? 'Assertion consumer URL' : 'Redirect URI'}
          value={f.redirect_uri}
          onValue={set('redirect_uri')}
          required
          hint={kind === 'saml' ? '…/api/sso/acs/<name>' : '…/api/sso/callback/<name>'}
        />
        {kind !== 'oauth2' && (
          <Field
            label={kind === 'saml' ? 'Identity provider entity id' : 'Issuer URL'}
            value={f.issuer_url}
            onValue={set('issuer_url')}
            required={kind === 'oidc'}
          />
        )}
        {kind !== 'oidc' && (
          <Field
            label={kind === 'saml' ? 'Identity provider SSO URL' : 'Authorization URL'}
            value={f.authorization_url}
            onValue={set('authorization_url')}
            required={kind === 'oauth2'}
          />
        )}
        {kind === 'oauth2' && (
          <>
            <Field label="Token URL" value={f.token_url} onValue={set('token_url')} required />
            <Field label="Userinfo URL" value={f.userinfo_url} onValue={set('userinfo_url')} required />
          </>
        )}
        {kind !== 'saml' && (
          <Field label="Scopes" value={f.scopes} onValue={set('scopes')} hint="Separated by spaces" />
        )}
      </div>
      {kind === 'oauth2' && (
        <CheckField
          label="Trust the provider's email as verified"
          checked={trustEmail}
          onChecked={setTrustEmail}
        />
      )}
      {kind === 'saml' && (
        <TextareaField
          label="Identity provider signing certificate (PEM)"
          value={f.cert}
          onValue={set('cert')}
          required
        />
      )}
      <Button type="submit" variant="primary" busy={busy}>
        Register provider
      </Button>
    </form>
  );
}

export default function SsoPage() {
  const tenants = useTenants();
  const providers = useResource((signal) =>
    api.get<{ providers: SsoProvider[] }>('/api/sso/providers', { signal }),
  );
  const [done, setDone] = useState<string | null>(null);
  const changed = (msg: string) => {
    setDone(msg);
    void providers.reload();
  };
  const { act, error } = useAction(changed);
  return (
    <ManagePage title="Single sign-on">
      <Done message={done} />
      <p class="muted">
        The API has no edit for a provider: to change one, disable it and register it again under a new name.
        Tenant providers show on the login page when the tenant has single sign-on enabled (Tenants →
        Settings).
      </p>
      <ErrorBox error={error} />
      <Loaded of={providers}>
        <Table
          caption="Active identity providers"
          rowKey={(p) => p.name}
          rows={providers.data?.providers ?? []}
          empty="No identity provider is registered."
          columns={[
            { key: 'name', header: 'Name' },
            { key: 'provider_type', header: 'Type' },
            {
              key: 'tenant',
              header: 'Tenant',
              render: (p) => (p.tenant_id == null ? 'Platform-wide' : tenantName(tenants.data, p.tenant_id)),
            },
            { key: 'login', header: 'Login URL', render: (p) => <code>{p.login_url}</code> },
            {
              key: 'actions',
              header: 'Actions',
              render: (p) => (
                <ConfirmButton
                  label={`Disable ${p.name}`}
                  question={`Disable ${p.name}? Its users can no longer sign in with it.`}
                  onConfirm={() =>
                    act(
                      () => api.del(`/api/sso/providers/${encodeURIComponent(p.name)}`),
                      `Provider ${p.name} disabled`,
                    )
                  }
                >
                  Disable
                </ConfirmButton>
              ),
            },
          ]}
        />
      </Loaded>
      <AddProvider onAdded={changed} />
    </ManagePage>
  );
}
