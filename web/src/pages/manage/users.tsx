// /manage/users: every user (GET /api/admin/users), create one, and per user: edit role, tenant and
// active state (PUT /api/admin/users/<id>), reset the password (PUT …/password), set quotas
// (PUT …/quota; token quotas are in millions, spec rule), delete (DELETE, confirmed). Who sees what
// (auth/access.ts): administrators change users (a tenant admin those of its tenant, no tenant picker);
// a manager (view_users) reads the list of its tenant without any control.
import { useState } from 'preact/hooks';
import { api } from '../../api/client.ts';
import { isSystemAdmin, mayManageUsers, type Viewer } from '../../auth/access.ts';
import { useAuth } from '../../auth/session.tsx';
import { CheckField } from '../../ui/check-field.tsx';
import { ConfirmButton } from '../../ui/confirm.tsx';
import {
  Button,
  ErrorBox,
  Field,
  formatNumber,
  formatTime,
  formatTokenLimit,
  Table,
} from '../../ui/index.ts';
import { Loaded } from '../../ui/loaded.tsx';
import { SelectField } from '../../ui/select-field.tsx';
import { useAction } from '../../ui/use-action.ts';
import { useSubmit } from '../../ui/use-submit.ts';
import { intText, readIntFields, tenantIdOf } from './form-values.ts';
import { Done, ManagePage, useFocusOnOpen } from './layout.tsx';
import { tenantName, tenantOptions, useTenants } from './tenant-options.ts';
import { ROLES, type User } from './types.ts';
import { useResource } from './use-resource.ts';

/** The roles the viewer may grant: only a system administrator grants platform_admin (API: canAssignRole). */
const roleOptionsFor = (v: Viewer | undefined) =>
  ROLES.filter((r) => r !== 'platform_admin' || (v && isSystemAdmin(v))).map((r) => ({ value: r, label: r }));
const useRoleOptions = () => roleOptionsFor(useAuth().viewer);
/** Tenant pickers are for system administrators; anyone else acts in their own tenant. */
const usePicksTenant = () => {
  const { viewer } = useAuth();
  return !!viewer && isSystemAdmin(viewer);
};
type Panel = { kind: 'edit' | 'password' | 'quota'; user: User } | null;

/** The role a viewer may grant, and the tenant for system administrators only (`none`: the empty choice). */
function RoleAndTenant(props: {
  role: string;
  onRole: (v: string) => void;
  tenant: string;
  onTenant: (v: string) => void;
  none: string;
}) {
  const tenants = useTenants();
  const roleOptions = useRoleOptions();
  const picksTenant = usePicksTenant();
  return (
    <>
      <SelectField label="Role" value={props.role} onValue={props.onRole} options={roleOptions} />
      {picksTenant && (
        <SelectField
          label="Tenant"
          value={props.tenant}
          onValue={props.onTenant}
          options={tenantOptions(tenants.data, props.none)}
        />
      )}
    </>
  );
}

function CreateUser({ onCreated }: { onCreated: (msg: string) => void }) {
  const [username, setUsername] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [role, setRole] = useState('user');
  const [tenant, setTenant] = useState('');
  const [mustChange, setMustChange] = useState(true);
  const { busy, error, submit } = useSubmit(async () => {
    await api.post('/api/admin/users', {
      username,
      email,
      password,
      role,
      tenant_id: tenantIdOf(tenant) ?? undefined,
      must_change_password: mustChange,
    });
    onCreated(`User ${username} created`);
    setUsername('');
    setEmail('');
    setPassword('');
  });
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="create-user-h">
      <h2 id="create-user-h">Create a user</h2>
      <ErrorBox error={error} />
      <div class="form-grid">
        <Field label="Username" value={username} onValue={setUsername} required autoComplete="off" />
        <Field label="Email" type="email" value={email} onValue={setEmail} autoComplete="off" />
        <Field
          label="Initial password"
          type="password"
          value={password}
          onValue={setPassword}
          required
          autoComplete="new-password"
        />
        <RoleAndTenant
          role={role}
          onRole={setRole}
          tenant={tenant}
          onTenant={setTenant}
          none="Default tenant"
        />
      </div>
      <CheckField
        label="Must change the password at first login"
        checked={mustChange}
        onChecked={setMustChange}
      />
      <Button type="submit" variant="primary" busy={busy}>
        Create user
      </Button>
    </form>
  );
}

function EditUser({ user, onDone }: { user: User; onDone: (msg: string | null) => void }) {
  const heading = useFocusOnOpen<HTMLHeadingElement>();
  const [role, setRole] = useState(user.role);
  const [tenant, setTenant] = useState(user.tenant_id == null ? '' : String(user.tenant_id));
  const [active, setActive] = useState(user.is_active);
  const [email, setEmail] = useState(user.email ?? '');
  const { busy, error, submit } = useSubmit(async () => {
    await api.put(`/api/admin/users/${user.id}`, {
      role,
      email,
      is_active: active,
      tenant_id: tenantIdOf(tenant),
    });
    onDone(`User ${user.username} updated`);
  });
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="edit-user-h">
      <h2 id="edit-user-h" tabIndex={-1} ref={heading}>
        Edit {user.username}
      </h2>
      <ErrorBox error={error} />
      <div class="form-grid">
        <Field label="Email" type="email" value={email} onValue={setEmail} />
        <RoleAndTenant role={role} onRole={setRole} tenant={tenant} onTenant={setTenant} none="No tenant" />
      </div>
      <CheckField label="Active (may log in)" checked={active} onChecked={setActive} />
      <div class="form-actions">
        <Button type="submit" variant="primary" busy={busy}>
          Save
        </Button>
        <Button variant="link" onClick={() => onDone(null)}>
          Cancel
        </Button>
      </div>
    </form>
  );
}

function ResetPassword({ user, onDone }: { user: User; onDone: (msg: string | null) => void }) {
  const heading = useFocusOnOpen<HTMLHeadingElement>();
  const [password, setPassword] = useState('');
  const [mustChange, setMustChange] = useState(true);
  const { busy, error, submit } = useSubmit(async () => {
    await api.put(`/api/admin/users/${user.id}/password`, { password, must_change_password: mustChange });
    onDone(`Password of ${user.username} reset; their sessions were ended`);
  });
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="reset-h">
      <h2 id="reset-h" tabIndex={-1} ref={heading}>
        Reset the password of {user.username}
      </h2>
      <ErrorBox error={error} />
      <Field
        label="New password"
        type="password"
        value={password}
        onValue={setPassword}
        required
        autoComplete="new-password"
      />
      <CheckField label="Must change it at next login" checked={mustChange} onChecked={setMustChange} />
      <div class="form-actions">
        <Button type="submit" variant="primary" busy={busy}>
          Reset password
        </Button>
        <Button variant="link" onClick={() => onDone(null)}>
          Cancel
        </Button>
      </div>
    </form>
  );
}

// User token quotas are typed in millions (the API's unit); the hint shows the limit as every screen
// does (formatTokenLimit), so a tenant's and a user's limits read alike.
const QUOTA_FIELDS = [
  ['daily_token_quota', 'Daily token limit (millions of tokens)'],
  ['monthly_token_quota', 'Monthly token limit (millions of tokens)'],
  ['daily_request_quota', 'Daily request limit (requests)'],
  ['monthly_request_quota', 'Monthly request limit (requests)'],
] as const;
function quotaNow(key: QuotaKey, value: number | null): string {
  if (key.endsWith('_token_quota')) return `Now ${formatTokenLimit(value, { inMillions: true })}`;
  return `Now ${value == null ? 'no limit' : `${formatNumber(value)} requests`}`;
}
type QuotaKey = (typeof QUOTA_FIELDS)[number][0];

function UserQuota({ user, onDone }: { user: User; onDone: (msg: string | null) => void }) {
  const heading = useFocusOnOpen<HTMLHeadingElement>();
  const [fields, setFields] = useState<Record<QuotaKey, string>>({
    daily_token_quota: intText(user.daily_token_quota),
    monthly_token_quota: intText(user.monthly_token_quota),
    daily_request_quota: intText(user.daily_request_quota),
    monthly_request_quota: intText(user.monthly_request_quota),
  });
  const [errors, setErrors] = useState<Partial<Record<QuotaKey, string>>>({});
  const { busy, error, submit } = useSubmit(async () => {
    const parsed = readIntFields(fields, { emptyAs: 'null' });
    setErrors(parsed.errors);
    if (Object.keys(parsed.errors).length) return;
    await api.put(`/api/admin/users/${user.id}/quota`, parsed.values);
    onDone(`Quota of ${user.username} saved`);
  });
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="quota-h">
      <h2 id="quota-h" tabIndex={-1} ref={heading}>
        Quota of {user.username}
      </h2>
      <p class="muted">Empty means no personal limit (the tenant's limits still apply).</p>
      <ErrorBox error={error} />
      <div class="form-grid">
        {QUOTA_FIELDS.map(([key, label]) => (
          <Field
            key={key}
            label={label}
            value={fields[key]}
            onValue={(v) => setFields({ ...fields, [key]: v })}
            error={errors[key]}
            hint={quotaNow(key, user[key])}
            type="text"
          />
        ))}
      </div>
      <div class="form-actions">
        <Button type="submit" variant="primary" busy={busy}>
          Save quota
        </Button>
        <Button variant="link" onClick={() => onDone(null)}>
          Cancel
        </Button>
      </div>
    </form>
  );
}

export default function UsersPage() {
  const users = useResource((signal) => api.get<{ users: User[] }>('/api/admin/users', { signal }));
  const tenants = useTenants();
  const { viewer } = useAuth();
  const manages = !!viewer && mayManageUsers(viewer);
  const picksTenant = usePicksTenant();
  const [panel, setPanel] = useState<Panel>(null);
  const [done, setDone] = useState<string | null>(null);

  const finish = (msg: string | null) => {
    setPanel(null);
    if (msg) {
      setDone(msg);
      void users.reload();
      void tenants.reload();
    }
  };
  const { act, error: actionError } = useAction(finish);
  const remove = (u: User) => act(() => api.del(`/api/admin/users/${u.id}`), `User ${u.username} deleted`);
  const actions = (u: User) => (
    <div class="row-actions">
      <Button aria-label={`Edit ${u.username}`} onClick={() => setPanel({ kind: 'edit', user: u })}>
        Edit
      </Button>
      <Button
        aria-label={`Reset password of ${u.username}`}
        onClick={() => setPanel({ kind: 'password', user: u })}
      >
        Password
      </Button>
      <Button aria-label={`Quota of ${u.username}`} onClick={() => setPanel({ kind: 'quota', user: u })}>
        Quota
      </Button>
      <ConfirmButton
        label={`Delete ${u.username}`}
        question={`Delete ${u.username}?`}
        onConfirm={() => remove(u)}
      >
        Delete
      </ConfirmButton>
    </div>
  );
  const limit = (n: number | null) => formatTokenLimit(n, { inMillions: true });

  return (
    <ManagePage title="Users">
      <Done message={done} />
      <ErrorBox error={actionError} />
      {panel?.kind === 'edit' && <EditUser key={panel.user.id} user={panel.user} onDone={finish} />}
      {panel?.kind === 'password' && <ResetPassword key={panel.user.id} user={panel.user} onDone={finish} />}
      {panel?.kind === 'quota' && <UserQuota key={panel.user.id} user={panel.user} onDone={finish} />}
      {manages ? (
        <CreateUser onCreated={finish} />
      ) : (
        <p class="muted">
          Read-only: your role shows the users of your tenant and their limits; an administrator changes them.
        </p>
      )}
      <Loaded of={users}>
        <Table
          caption={`Users (${formatNumber(users.data?.users.length ?? 0)})`}
          rowKey={(u) => u.id}
          rows={users.data?.users ?? []}
          empty="No users yet."
          columns={[
            {
              key: 'username',
              header: 'Username',
              render: (u) => <span class="cell-wrap">{u.username}</span>,
            },
            { key: 'email', header: 'Email', render: (u) => <span class="cell-wrap">{u.email ?? '—'}</span> },
            { key: 'role', header: 'Role' },
            ...(picksTenant
              ? [
                  {
                    key: 'tenant',
                    header: 'Tenant',
                    render: (u: User) => tenantName(tenants.data, u.tenant_id),
                  },
                ]
              : []),
            {
              key: 'active',
              header: 'State',
              render: (u) => (
                <span class={`badge ${u.is_active ? 'badge-ok' : 'badge-bad'}`}>
                  {u.is_active ? 'active' : 'inactive'}
                </span>
              ),
            },
            { key: 'last', header: 'Last login', render: (u) => formatTime(u.last_login_at) },
            {
              key: 'quota',
              header: 'Daily / monthly token limit',
              numeric: true,
              render: (u) => `${limit(u.daily_token_quota)} / ${limit(u.monthly_token_quota)}`,
            },
            ...(manages ? [{ key: 'actions', header: 'Actions', render: actions }] : []),
          ]}
        />
      </Loaded>
    </ManagePage>
  );
}
