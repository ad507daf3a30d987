// /manage/sso: the active identity providers (GET /api/sso/providers: public fields only), register
// one (POST /api/sso/providers: OIDC, OAuth2 or SAML; the client secret is write-only and never read
// back), edit one (GET/PUT /api/sso/providers/<name>: name and type fixed, a blank secret keeps the
// stored one), and disable one (DELETE, confirmed).
import { useState } from 'preact/hooks';
import { callbackPathOf } from '../../../../domain/sso/callback-path.ts';
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

/** GET /api/sso/providers/<name>: the settings in registration field names, never the secret. */
interface EditableProvider {
  name: string;
  provider_type: Kind;
  tenant_id: number | null;
  client_id: string;
  redirect_uri: string;
  issuer_url?: string;
  authorization_url?: string;
  token_url?: string;
  userinfo_url?: string;
  scopes?: string[];
  trust_email?: boolean;
  idp_x509_cert?: string;
  /** Not on the form: sent back as it was so an edit keeps it. */
  attribute_mapping?: Record<string, string>;
}

const EMPTY = {
  name: '',
  tenant: '',
  issuer_url: '',
  client_id: '',
  client_secret: '',
  redirect_uri: '',
  scopes: 'openid email profile',
  authorization_url: '',
  token_url: '',
  userinfo_url: '',
  cert: '',
};

/** The redirect URI the form proposes: this origin plus the provider's own callback (or ACS) path. */
const proposedRedirect = (name: string, kind: Kind) =>
  `${window.location.origin}${callbackPathOf(name.trim(), kind)}`;

/**
 * Register a provider, or edit one (`editing`: its current settings; name and type fixed). The redirect
 * URI follows the name and type until the administrator types one. A refused save keeps every field,
 * the client secret included; a stored secret is never shown (blank keeps it).
 */
function ProviderForm({
  editing,
  onSaved,
  onCancel,
}: {
  editing: EditableProvider | null;
  onSaved: (msg: string) => void;
  onCancel: () => void;
}) {
  const tenants = useTenants();
  const [kind, setKind] = useState<Kind>(editing?.provider_type ?? 'oidc');
  const [f, setF] = useState(() =>
    editing
      ? {
          ...EMPTY,
          name: editing.name,
          tenant: editing.tenant_id == null ? '' : String(editing.tenant_id),
          issuer_url: editing.issuer_url ?? '',
          client_id: editing.client_id,
          redirect_uri: editing.redirect_uri,
          scopes: (editing.scopes ?? []).join(' '),
          authorization_url: editing.authorization_url ?? '',
          token_url: editing.token_url ?? '',
          userinfo_url: editing.userinfo_url ?? '',
          cert: editing.idp_x509_cert ?? '',
        }
      : EMPTY,
  );
  // Typed by hand (or loaded from a stored provider): no longer follows the name.
  const [ownRedirect, setOwnRedirect] = useState(editing !== null);
  const [trustEmail, setTrustEmail] = useState(editing?.trust_email === true);
  const set = (k: keyof typeof f) => (v: string) => setF((x) => ({ ...x, [k]: v }));
  const redirect = ownRedirect ? f.redirect_uri : proposedRedirect(f.name, kind);

  const body = () => {
    const head = {
      name: f.name.trim(),
      provider_type: kind,
      tenant_id: tenantIdOf(f.tenant),
    };
    if (kind === 'saml')
      return {
        ...head,
        client_id: f.client_id,
        redirect_uri: redirect,
        authorization_url: f.authorization_url || undefined,
        issuer_url: f.issuer_url || undefined,
        extra_params: { idp_x509_cert: f.cert || undefined, attribute_mapping: editing?.attribute_mapping },
      };
    const common = {
      ...head,
      client_id: f.client_id,
      client_secret: f.client_secret,
      redirect_uri: redirect,
      scopes: scopesOf(f.scopes),
      attribute_mapping: editing?.attribute_mapping,
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
    if (editing) {
      await api.put(`/api/sso/providers/${encodeURIComponent(editing.name)}`, payload);
      onSaved(`Provider ${editing.name} saved`);
      return;
    }
    // Cleared only once saved: after a refusal the administrator fixes one field, not all of them.
    await api.post('/api/sso/providers', payload);
    onSaved(`Provider ${payload.name} registered`);
    setF((x) => ({ ...x, name: '', client_id: '', client_secret: '', cert: '' }));
    setOwnRedirect(false);
  });
  const heading = editing ? `Edit ${editing.name}` : 'Register an identity provider';
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="add-sso-h" autoComplete="off">
      <h2 id="add-sso-h">{heading}</h2>
      <ErrorBox error={error} />
      <div class="form-grid">
        <Field
          label="Name"
          value={f.name}
          onValue={set('name')}
          required
          disabled={editing !== null}
          hint={editing ? 'A name never changes' : 'Used in the login and callback URLs'}
        />
        <SelectField
          label="Type"
          value={kind}
          disabled={editing !== null}
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
            required={editing === null}
            autoComplete="new-password"
            hint={
              editing
                ? 'Leave blank to keep the stored secret (never shown)'
                : 'Write-only: stored encrypted, never shown'
            }
          />
        )}
        <Field
          label={kind === 'saml' ? 'Assertion consumer URL' : 'Redirect URI'}
          value={redirect}
          onValue={(v) => {
            setOwnRedirect(true);
            set('redirect_uri')(v);
          }}
          required
          hint={`Must end with ${callbackPathOf(f.name.trim() || '<name>', kind)}`}
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
        {editing ? 'Save provider' : 'Register provider'}
      </Button>
      {editing && (
        <Button type="button" onClick={onCancel}>
          Cancel
        </Button>
      )}
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
  const [editing, setEditing] = useState<EditableProvider | null>(null);
  const edit = (name: string) =>
    act(async () => {
      const r = await api.get<{ provider: EditableProvider }>(
        `/api/sso/providers/${encodeURIComponent(name)}`,
      );
      setEditing(r.provider);
    });
  const saved = (msg: string) => {
    setEditing(null);
    changed(msg);
  };
  return (
    <ManagePage title="Single sign-on">
      <Done message={done} />
      <p class="muted">
        A provider's name and type never change (its users are linked by name); everything else can be edited.
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
                <>
                  <Button onClick={() => void edit(p.name)} aria-label={`Edit ${p.name}`}>
                    Edit
                  </Button>
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
                </>
              ),
            },
          ]}
        />
      </Loaded>
      {/* Keyed: opening another provider (or going back to registering) starts from its own values. */}
      <ProviderForm
        key={editing?.name ?? ''}
        editing={editing}
        onSaved={saved}
        onCancel={() => setEditing(null)}
      />
    </ManagePage>
  );
}
