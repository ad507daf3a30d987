// /manage/keys: the stored model provider keys the proxy uses. Listed masked from the vault
// (GET /api/remote/api-keys, every tenant or one), added per tenant (POST /api/api-keys with
// tenant_id: the key field is write-only, cleared once sent and never shown again), deactivated /
// activated (PUT /api/api-keys/<id> {tenant_id, is_active}) and deleted (DELETE, confirmed). A tenant
// admin works on its own tenant's keys only (GET /api/api-keys without tenant_id: the spec's tenant
// rules), with no tenant picker.
import { useState } from 'preact/hooks';
import { api } from '../../api/client.ts';
import { isSystemAdmin } from '../../auth/access.ts';
import { useAuth } from '../../auth/session.tsx';
import { CheckField } from '../../ui/check-field.tsx';
import { ConfirmButton } from '../../ui/confirm.tsx';
import { Button, ErrorBox, Field, formatTime, Loading, Table } from '../../ui/index.ts';
import { SelectField } from '../../ui/select-field.tsx';
import { useAction } from '../../ui/use-action.ts';
import { useSubmit } from '../../ui/use-submit.ts';
import { tenantIdOf } from './form-values.ts';
import { Done, ManagePage } from './layout.tsx';
import { tenantName, tenantOptions, useTenants } from './tenant-options.ts';
import { KEY_PROVIDERS, type StoredKey } from './types.ts';
import { useResource } from './use-resource.ts';

function AddKey({
  tenantIds,
  picksTenant,
  onAdded,
}: {
  tenantIds: ReturnType<typeof useTenants>;
  /** System administrators choose the tenant; a tenant admin's keys go to its own. */
  picksTenant: boolean;
  onAdded: (msg: string) => void;
}) {
  const [tenant, setTenant] = useState('');
  const [provider, setProvider] = useState<string>(KEY_PROVIDERS[0]);
  const [name, setName] = useState('');
  const [secret, setSecret] = useState('');
  const [baseUrl, setBaseUrl] = useState('');
  const [active, setActive] = useState(true);
  const chosen = tenantIdOf(tenant) ?? tenantIds.data?.[0]?.id ?? null;
  const { busy, error, submit } = useSubmit(async () => {
    if (picksTenant && chosen == null) {
      throw new Error('Choose a tenant first');
    }
    // The plain key leaves the page's state as soon as it is sent, whatever the answer.
    const plain = secret;
    setSecret('');
    await api.post('/api/api-keys', {
      tenant_id: picksTenant ? chosen : undefined,
      provider,
      key_name: name,
      api_key: plain,
      base_url: baseUrl.trim() || undefined,
      is_active: active,
    });
    onAdded(`Key ${name} stored; it is shown masked from now on`);
    setName('');
    setBaseUrl('');
  });
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="add-key-h" autoComplete="off">
      <h2 id="add-key-h">Add a provider key</h2>
      <p class="muted">The key is encrypted before it is stored and is never shown again, not even to you.</p>
      <ErrorBox error={error} />
      <div class="form-grid">
        {picksTenant && (
          <SelectField
            label="Tenant"
            value={tenant || (chosen != null ? String(chosen) : '')}
            onValue={setTenant}
            options={tenantOptions(tenantIds.data)}
          />
        )}
        <SelectField
          label="Provider"
          value={provider}
          onValue={setProvider}
          options={KEY_PROVIDERS.map((p) => ({ value: p, label: p }))}
        />
        <Field label="Key name" value={name} onValue={setName} required />
        <Field
          label="API key"
          type="password"
          value={secret}
          onValue={setSecret}
          required
          autoComplete="new-password"
          hint="Write-only"
        />
        <Field
          label="Base URL (optional)"
          value={baseUrl}
          onValue={setBaseUrl}
          hint="Empty: the provider's own API"
        />
      </div>
      <CheckField label="Active" checked={active} onChecked={setActive} />
      <Button type="submit" variant="primary" busy={busy}>
        Store key
      </Button>
    </form>
  );
}

export default function KeysPage() {
  const tenants = useTenants();
  const { viewer } = useAuth();
  const system = !!viewer && isSystemAdmin(viewer);
  const [filter, setFilter] = useState('');
  const keys = useResource(
    (signal) =>
      system
        ? api.get<{ keys: StoredKey[] }>('/api/remote/api-keys', {
            signal,
            query: { tenant_id: tenantIdOf(filter) },
          })
        : api.get<{ keys: StoredKey[] }>('/api/api-keys', { signal }),
    [filter, system],
  );
  const [done, setDone] = useState<string | null>(null);
  const added = (msg: string) => {
    setDone(msg);
    void keys.reload();
  };
  const { act, error } = useAction(added);

  return (
    <ManagePage title="Provider keys">
      <Done message={done} />
      <AddKey tenantIds={tenants} picksTenant={system} onAdded={added} />
      <ErrorBox error={error} />
      <ErrorBox error={keys.error} />
      {system && (
        <div class="form-grid">
          <SelectField
            label="Show keys of"
            value={filter}
            onValue={setFilter}
            options={tenantOptions(tenants.data, 'Every tenant')}
          />
        </div>
      )}
      {keys.loading && !keys.data ? (
        <Loading />
      ) : (
        <Table
          caption="Stored provider keys"
          rowKey={(k) => k.id}
          rows={keys.data?.keys ?? []}
          empty="No key is stored yet."
          columns={[
            { key: 'key_name', header: 'Name', render: (k) => <span class="cell-wrap">{k.key_name}</span> },
            { key: 'provider', header: 'Provider' },
            ...(system
              ? [
                  {
                    key: 'tenant',
                    header: 'Tenant',
                    render: (k: StoredKey) => tenantName(tenants.data, k.tenant_id),
                  },
                ]
              : []),
            { key: 'masked', header: 'Key', render: (k) => <code>{k.masked_key}</code> },
            {
              key: 'base',
              header: 'Base URL',
              render: (k) => <span class="cell-wrap">{k.base_url ?? 'default'}</span>,
            },
            {
              key: 'active',
              header: 'State',
              render: (k) => (
                <span class={`badge ${k.is_active ? 'badge-ok' : 'badge-bad'}`}>
                  {k.is_active ? 'active' : 'inactive'}
                </span>
              ),
            },
            { key: 'created', header: 'Added', render: (k) => formatTime(k.created_at) },
            {
              key: 'actions',
              header: 'Actions',
              render: (k) => (
                <div class="row-actions">
                  <Button
                    aria-label={`${k.is_active ? 'Deactivate' : 'Activate'} ${k.key_name}`}
                    onClick={() =>
                      act(
                        () =>
                          api.put(`/api/api-keys/${k.id}`, {
                            tenant_id: k.tenant_id,
                            is_active: !k.is_active,
                          }),
                        `Key ${k.key_name} ${k.is_active ? 'deactivated' : 'activated'}`,
                      )
                    }
                  >
                    {k.is_active ? 'Deactivate' : 'Activate'}
                  </Button>
                  <ConfirmButton
                    label={`Delete ${k.key_name}`}
                    question={`Delete ${k.key_name}?`}
                    onConfirm={() =>
                      act(
                        () => api.del(`/api/api-keys/${k.id}`, { query: { tenant_id: k.tenant_id } }),
                        `Key ${k.key_name} deleted`,
                      )
                    }
                  >
                    Delete
                  </ConfirmButton>
                </div>
              ),
            },
          ]}
        />
      )}
    </ManagePage>
  );
}
