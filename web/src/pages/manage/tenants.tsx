// /manage/tenants: every tenant (GET /api/tenants), create one (POST), and per tenant its detail
// (GET /api/tenants/<id>): quotas (PUT …/quota), settings (PUT …/settings), suspend / activate
// (POST …/suspend|activate; suspending is confirmed) and delete (DELETE, soft, confirmed).
import { useState } from 'preact/hooks';
import { api } from '../../api/client.ts';
import { CheckField } from '../../ui/check-field.tsx';
import { ConfirmButton } from '../../ui/confirm.tsx';
import {
  Button,
  ErrorBox,
  Field,
  formatNumber,
  formatTime,
  formatTokenLimit,
  Loading,
  Table,
} from '../../ui/index.ts';
import { Loaded } from '../../ui/loaded.tsx';
import { SelectField } from '../../ui/select-field.tsx';
import { useAction } from '../../ui/use-action.ts';
import { useSubmit } from '../../ui/use-submit.ts';
import { intText, readIntFields } from './form-values.ts';
import { Done, ManagePage, useFocusOnOpen } from './layout.tsx';
import { tenantStatusWord } from './tenant-status.ts';
import type { Tenant, TenantDetail } from './types.ts';
import { useResource } from './use-resource.ts';

interface Plans {
  plans: { id: string; description: string; default: boolean }[];
}

function CreateTenant({ onCreated }: { onCreated: (msg: string) => void }) {
  const plans = useResource((signal) => api.get<Plans>('/api/tenants/plans', { signal }));
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const [plan, setPlan] = useState('');
  const [email, setEmail] = useState('');
  const { busy, error, submit } = useSubmit(async () => {
    const r = await api.post<{ tenant: Tenant }>('/api/tenants', {
      name,
      slug: slug.trim() || undefined,
      plan: plan || undefined,
      contact_email: email,
    });
    onCreated(`Tenant ${r.tenant.name} created (${r.tenant.slug})`);
    setName('');
    setSlug('');
    setEmail('');
  });
  const options = [
    { value: '', label: 'Default plan' },
    ...(plans.data?.plans ?? []).map((p) => ({ value: p.id, label: `${p.id}: ${p.description}` })),
  ];
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="create-tenant-h">
      <h2 id="create-tenant-h">Create a tenant</h2>
      <ErrorBox error={error} />
      <div class="form-grid">
        <Field label="Tenant name" value={name} onValue={setName} required />
        <Field
          label="Slug"
          value={slug}
          onValue={setSlug}
          hint="Lower-case letters, digits, dashes; from the name when empty"
        />
        <SelectField label="Plan" value={plan} onValue={setPlan} options={options} />
        <Field label="Contact email" type="email" value={email} onValue={setEmail} />
      </div>
      <Button type="submit" variant="primary" busy={busy}>
        Create tenant
      </Button>
    </form>
  );
}

// Labels name the unit typed; the "Now" hints show token limits as everywhere (formatTokenLimit).
const QUOTA_FIELDS = [
  ['daily_token_limit', 'Daily token limit (tokens)'],
  ['monthly_token_limit', 'Monthly token limit (tokens)'],
  ['daily_request_limit', 'Daily request limit (requests)'],
  ['monthly_request_limit', 'Monthly request limit (requests)'],
  ['max_users', 'Maximum users'],
  ['max_sessions_per_user', 'Maximum sessions per user'],
] as const;
const nowText = (key: QuotaKey, value: number) =>
  `Now ${key.endsWith('_token_limit') ? formatTokenLimit(value) : formatNumber(value)}`;
type QuotaKey = (typeof QUOTA_FIELDS)[number][0];

function TenantQuota({ detail, onSaved }: { detail: TenantDetail; onSaved: (msg: string) => void }) {
  const [fields, setFields] = useState(
    Object.fromEntries(QUOTA_FIELDS.map(([k]) => [k, intText(detail.quota[k])])) as Record<QuotaKey, string>,
  );
  const [errors, setErrors] = useState<Partial<Record<QuotaKey, string>>>({});
  const { busy, error, submit } = useSubmit(async () => {
    const parsed = readIntFields(fields);
    setErrors(parsed.errors);
    if (Object.keys(parsed.errors).length) return;
    await api.put(`/api/tenants/${detail.id}/quota`, parsed.values);
    onSaved(`Quotas of ${detail.name} saved`);
  });
  return (
    <form onSubmit={submit} aria-labelledby="tq-h">
      <h3 id="tq-h">Quotas</h3>
      <ErrorBox error={error} />
      <div class="form-grid">
        {QUOTA_FIELDS.map(([key, label]) => (
          <Field
            key={key}
            label={label}
            value={fields[key]}
            onValue={(v) => setFields({ ...fields, [key]: v })}
            error={errors[key]}
            hint={nowText(key, detail.quota[key])}
          />
        ))}
      </div>
      <Button type="submit" variant="primary" busy={busy}>
        Save quotas
      </Button>
    </form>
  );
}

function TenantSettings({ detail, onSaved }: { detail: TenantDetail; onSaved: (msg: string) => void }) {
  const s = detail.settings;
  const [filter, setFilter] = useState(s.content_filter_enabled);
  const [audit, setAudit] = useState(s.audit_log_enabled);
  const [sso, setSso] = useState(s.sso_enabled);
  const [days, setDays] = useState({
    audit_log_retention_days: intText(s.audit_log_retention_days),
    data_retention_days: intText(s.data_retention_days),
  });
  const [errors, setErrors] = useState<Partial<Record<keyof typeof days, string>>>({});
  const { busy, error, submit } = useSubmit(async () => {
    const parsed = readIntFields(days, { min: 1, max: 36500 });
    setErrors(parsed.errors);
    if (Object.keys(parsed.errors).length) return;
    await api.put(`/api/tenants/${detail.id}/settings`, {
      content_filter_enabled: filter,
      audit_log_enabled: audit,
      sso_enabled: sso,
      ...parsed.values,
    });
    onSaved(`Settings of ${detail.name} saved`);
  });
  return (
    <form onSubmit={submit} aria-labelledby="ts-h">
      <h3 id="ts-h">Settings</h3>
      <ErrorBox error={error} />
      <CheckField label="Content filter enabled" checked={filter} onChecked={setFilter} />
      <CheckField label="Audit log enabled" checked={audit} onChecked={setAudit} />
      <CheckField label="Single sign-on enabled" checked={sso} onChecked={setSso} />
      <div class="form-grid">
        <Field
          label="Audit log retention (days)"
          value={days.audit_log_retention_days}
          onValue={(v) => setDays({ ...days, audit_log_retention_days: v })}
          error={errors.audit_log_retention_days}
        />
        <Field
          label="Data retention (days)"
          value={days.data_retention_days}
          onValue={(v) => setDays({ ...days, data_retention_days: v })}
          error={errors.data_retention_days}
        />
      </div>
      <Button type="submit" variant="primary" busy={busy}>
        Save settings
      </Button>
    </form>
  );
}

function TenantPanel({
  id,
  exceeded,
  onChanged,
  onClose,
}: {
  id: number;
  /** The limits this tenant has reached (GET /api/quota/status/all). */
  exceeded: string[];
  onChanged: (msg: string) => void;
  onClose: () => void;
}) {
  const detail = useResource(
    (signal) => api.get<{ tenant: TenantDetail }>(`/api/tenants/${id}`, { signal }),
    [id],
  );
  const heading = useFocusOnOpen<HTMLHeadingElement>(!!detail.data);
  const { act, error } = useAction(async (msg) => {
    onChanged(msg);
    await detail.reload();
  });
  if (detail.error) return <ErrorBox error={detail.error} />;
  const t = detail.data?.tenant;
  if (!t) return <Loading />;
  const status = tenantStatusWord(t.status, exceeded);
  const saved = (msg: string) => {
    onChanged(msg);
    void detail.reload();
  };
  return (
    <section class="panel" aria-labelledby="tenant-h">
      <h2 id="tenant-h" tabIndex={-1} ref={heading}>
        {t.name} <span class="muted">({t.slug})</span>
      </h2>
      <p>
        Status <span class={`badge ${status.bad ? 'badge-bad' : 'badge-ok'}`}>{status.word}</span>
        {status.reached.length > 0 && <> (limit reached: {status.reached.join(', ')})</>}, plan {t.plan},{' '}
        {formatNumber(t.user_count)} users, {formatNumber(t.total_tokens_used)} tokens used.
      </p>
      <ErrorBox error={error} />
      <div class="form-actions">
        {t.status === 'suspended' ? (
          <Button
            variant="primary"
            onClick={() => act(() => api.post(`/api/tenants/${t.id}/activate`), `Tenant ${t.name} activated`)}
          >
            Activate
          </Button>
        ) : (
          <ConfirmButton
            label={`Suspend ${t.name}`}
            question={`Suspend ${t.name}? Its users can no longer log in.`}
            onConfirm={() =>
              act(() => api.post(`/api/tenants/${t.id}/suspend`), `Tenant ${t.name} suspended`)
            }
          >
            Suspend
          </ConfirmButton>
        )}
        {t.id !== 1 && (
          <ConfirmButton
            label={`Delete ${t.name}`}
            question={`Delete ${t.name}?`}
            onConfirm={() =>
              act(async () => {
                await api.del(`/api/tenants/${t.id}`);
                onChanged(`Tenant ${t.name} deleted`);
                onClose();
              })
            }
          >
            Delete
          </ConfirmButton>
        )}
        <Button variant="link" onClick={onClose}>
          Close
        </Button>
      </div>
      <TenantQuota key={`q${t.id}-${JSON.stringify(t.quota)}`} detail={t} onSaved={saved} />
      <TenantSettings key={`s${t.id}-${JSON.stringify(t.settings)}`} detail={t} onSaved={saved} />
    </section>
  );
}

export default function TenantsPage() {
  const tenants = useResource((signal) => api.get<{ tenants: Tenant[] }>('/api/tenants', { signal }));
  // The quota accounting the service enforces: an active tenant past a limit reads "over quota".
  const quota = useResource((signal) =>
    api.get<{ tenants: { tenant_id: number; exceeded: string[] }[] }>('/api/quota/status/all', { signal }),
  );
  const exceededOf = (id: number) => quota.data?.tenants.find((q) => q.tenant_id === id)?.exceeded ?? [];
  const [open, setOpen] = useState<number | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const changed = (msg: string) => {
    setDone(msg);
    void tenants.reload();
    void quota.reload();
  };
  return (
    <ManagePage title="Tenants">
      <Done message={done} />
      {open != null && (
        <TenantPanel
          key={open}
          id={open}
          exceeded={exceededOf(open)}
          onChanged={changed}
          onClose={() => setOpen(null)}
        />
      )}
      <CreateTenant onCreated={changed} />
      <Loaded of={tenants}>
        <Table
          caption={`Tenants (${formatNumber(tenants.data?.tenants.length ?? 0)})`}
          rowKey={(t) => t.id}
          rows={tenants.data?.tenants ?? []}
          empty="No tenants yet."
          columns={[
            { key: 'name', header: 'Name', render: (t) => <span class="cell-wrap">{t.name}</span> },
            { key: 'slug', header: 'Slug' },
            {
              key: 'status',
              header: 'Status',
              render: (t) => {
                const s = tenantStatusWord(t.status, exceededOf(t.id));
                return <span class={`badge ${s.bad ? 'badge-bad' : 'badge-ok'}`}>{s.word}</span>;
              },
            },
            { key: 'plan', header: 'Plan' },
            { key: 'users', header: 'Users', numeric: true, render: (t) => formatNumber(t.user_count) },
            {
              key: 'tokens',
              header: 'Tokens used',
              numeric: true,
              render: (t) => formatNumber(t.total_tokens_used),
            },
            { key: 'created', header: 'Created', render: (t) => formatTime(t.created_at) },
            {
              key: 'actions',
              header: 'Actions',
              render: (t) => (
                <Button aria-label={`Manage ${t.name}`} onClick={() => setOpen(t.id)}>
                  Manage
                </Button>
              ),
            },
          ]}
        />
      </Loaded>
    </ManagePage>
  );
}
