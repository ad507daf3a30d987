// /manage/machines: create a registration token for a tenant (POST /api/remote/machines/register)
// and show it once with the agent install command to copy; the tokens (GET …/registration-tokens,
// never the token itself) with revoke (DELETE, confirmed); the registered machines
// (GET /api/remote/machines) with unregister (DELETE, confirmed; ends their sessions), and each
// machine's users with assign / unassign (machine-users.tsx). Registration and unregistering are for
// system administrators; a machine administrator (any role) sees the machines it administers and
// manages their users.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../../api/client.ts';
import { isSystemAdmin } from '../../auth/access.ts';
import { useAuth } from '../../auth/session.tsx';
import { ConfirmButton } from '../../ui/confirm.tsx';
import { CopyBox } from '../../ui/copy-box.tsx';
import { Button, ErrorBox, Field, formatTime, Table } from '../../ui/index.ts';
import { Loaded } from '../../ui/loaded.tsx';
import { SelectField } from '../../ui/select-field.tsx';
import { useAction } from '../../ui/use-action.ts';
import { useSubmit } from '../../ui/use-submit.ts';
import { tenantIdOf } from './form-values.ts';
import { installCommand, installCommandWindows } from './install-command.ts';
import { Done, ManagePage, useFocusOnOpen } from './layout.tsx';
import { MachineUsers } from './machine-users.tsx';
import { tenantName, tenantOptions, useTenants } from './tenant-options.ts';
import type { Machine, RegistrationToken } from './types.ts';
import { useResource } from './use-resource.ts';

interface Created {
  registration_token: string;
  tenant_id: number;
  machine_id: string | null;
  expires_at: string;
}

function NewToken({ token, tenants, onClose }: { token: Created; tenants: string; onClose: () => void }) {
  const heading = useFocusOnOpen<HTMLHeadingElement>();
  const origin = window.location.origin;
  return (
    <section class="secret-once" aria-labelledby="token-h">
      <h2 id="token-h" tabIndex={-1} ref={heading}>
        Registration token for {tenants}
      </h2>
      <p>
        Shown once: it is not stored in readable form. It expires {formatTime(token.expires_at)} and registers{' '}
        {token.machine_id ? `machine ${token.machine_id} again` : 'one new machine'}. Run this on the machine
        (Node.js 18+):
      </p>
      <CopyBox label="Install command" text={installCommand(origin, token.registration_token)} />
      <CopyBox
        label="Install command (Windows PowerShell)"
        text={installCommandWindows(origin, token.registration_token)}
      />
      <Button variant="link" onClick={onClose}>
        Done, hide the token
      </Button>
    </section>
  );
}

export default function MachinesPage() {
  const { viewer } = useAuth();
  return viewer && isSystemAdmin(viewer) ? <SystemMachines /> : <AdministeredMachines />;
}

/** A machine administrator's view: the machines it administers, each with its users. */
function AdministeredMachines() {
  const machines = useResource((signal) =>
    api.get<{ machines: Machine[] }>('/api/remote/machines', { signal }),
  );
  const [open, setOpen] = useState<Machine | null>(null);
  const mine = (machines.data?.machines ?? []).filter((m) => m.current_user_permission === 'admin');
  return (
    <ManagePage title="Machines">
      <p class="muted">
        The machines you administer. You assign users of the machine's tenant (as users; a system
        administrator grants machine administration) and unassign them.
      </p>
      {open && <MachineUsers key={open.machine_id} machine={open} onClose={() => setOpen(null)} />}
      <Loaded of={machines}>
        <MachineTable
          rows={mine}
          tenantOf={() => null}
          actions={(m) => <UsersButton machine={m} onOpen={setOpen} />}
        />
      </Loaded>
    </ManagePage>
  );
}

function UsersButton({ machine, onOpen }: { machine: Machine; onOpen: (m: Machine) => void }) {
  return (
    <Button
      aria-label={`Users of ${machine.machine_name ?? machine.machine_id}`}
      onClick={() => onOpen(machine)}
    >
      Users
    </Button>
  );
}

function MachineTable({
  rows,
  tenantOf,
  actions,
}: {
  rows: Machine[];
  /** The tenant's name, or null to leave the column out (everyone else sees one tenant). */
  tenantOf: (m: Machine) => string | null;
  actions: (m: Machine) => ComponentChildren;
}) {
  const withTenant = rows.some((m) => tenantOf(m) != null);
  return (
    <Table
      caption="Registered machines"
      rowKey={(m) => m.machine_id}
      rows={rows}
      empty="No machine is registered yet."
      columns={[
        {
          key: 'name',
          header: 'Machine',
          render: (m) => (
            <span class="cell-wrap">
              {m.machine_name ?? m.machine_id}
              <br />
              <span class="muted">{m.machine_id}</span>
            </span>
          ),
        },
        { key: 'host', header: 'Host', render: (m) => `${m.hostname ?? '—'} (${m.os_type ?? '?'})` },
        {
          key: 'status',
          header: 'Status',
          render: (m) => <span class={`badge ${m.status === 'online' ? 'badge-ok' : ''}`}>{m.status}</span>,
        },
        ...(withTenant ? [{ key: 'tenant', header: 'Tenant', render: (m: Machine) => tenantOf(m) }] : []),
        { key: 'agent', header: 'Agent', render: (m) => m.agent_version ?? '—' },
        { key: 'seen', header: 'Last heartbeat', render: (m) => formatTime(m.last_heartbeat) },
        { key: 'actions', header: 'Actions', render: (m) => <div class="row-actions">{actions(m)}</div> },
      ]}
    />
  );
}

function SystemMachines() {
  const tenants = useTenants();
  const machines = useResource((signal) =>
    api.get<{ machines: Machine[] }>('/api/remote/machines', { signal }),
  );
  const tokens = useResource((signal) =>
    api.get<{ tokens: RegistrationToken[] }>('/api/remote/machines/registration-tokens', { signal }),
  );
  const [open, setOpen] = useState<Machine | null>(null);
  const [tenant, setTenant] = useState('');
  const [machineId, setMachineId] = useState('');
  const [created, setCreated] = useState<Created | null>(null);
  const [done, setDone] = useState<string | null>(null);

  const chosenTenant = tenantIdOf(tenant) ?? tenants.data?.[0]?.id ?? null;
  const {
    busy,
    error,
    submit: create,
  } = useSubmit(async () => {
    setDone(null);
    if (chosenTenant == null) {
      throw new Error('Choose a tenant first');
    }
    const r = await api.post<Created>('/api/remote/machines/register', {
      tenant_id: chosenTenant,
      machine_id: machineId.trim() || undefined,
    });
    setCreated(r);
    setMachineId('');
    void tokens.reload();
  });
  const { act, error: actError } = useAction((msg) => {
    setDone(msg);
    void tokens.reload();
    void machines.reload();
  });

  return (
    <ManagePage title="Machines">
      <Done message={done} />
      <ErrorBox error={actError} />
      {created && (
        <NewToken
          token={created}
          tenants={tenantName(tenants.data, created.tenant_id)}
          onClose={() => setCreated(null)}
        />
      )}
      <form class="panel" onSubmit={create} aria-labelledby="reg-h">
        <h2 id="reg-h">Register a machine</h2>
        <p class="muted">
          A registration token lets one agent register a machine for the tenant. Then assign its users with
          the machine's Users button below.
        </p>
        <ErrorBox error={error} />
        <div class="form-grid">
          <SelectField
            label="Tenant"
            value={tenant || (chosenTenant != null ? String(chosenTenant) : '')}
            onValue={setTenant}
            options={tenantOptions(tenants.data)}
          />
          <Field
            label="Machine id to re-enrol (optional)"
            value={machineId}
            onValue={setMachineId}
            hint="Only to take over an existing machine id; its sessions end"
          />
        </div>
        <Button type="submit" variant="primary" busy={busy}>
          Create registration token
        </Button>
      </form>

      {open && <MachineUsers key={open.machine_id} machine={open} onClose={() => setOpen(null)} />}
      <Loaded of={machines}>
        <MachineTable
          rows={machines.data?.machines ?? []}
          tenantOf={(m) => tenantName(tenants.data, m.tenant_id)}
          actions={(m) => (
            <>
              <UsersButton machine={m} onOpen={setOpen} />
              <ConfirmButton
                label={`Unregister ${m.machine_name ?? m.machine_id}`}
                question="Unregister it and end its sessions?"
                onConfirm={() =>
                  act(
                    () => api.del(`/api/remote/machines/${encodeURIComponent(m.machine_id)}`),
                    `Machine ${m.machine_id} unregistered`,
                  )
                }
              >
                Unregister
              </ConfirmButton>
            </>
          )}
        />
      </Loaded>

      <Loaded of={tokens}>
        <Table
          caption="Registration tokens"
          rowKey={(t) => t.id}
          rows={tokens.data?.tokens ?? []}
          empty="No registration token yet."
          columns={[
            { key: 'id', header: 'Id', numeric: true },
            { key: 'tenant', header: 'Tenant', render: (t) => tenantName(tenants.data, t.tenant_id) },
            { key: 'status', header: 'Status' },
            {
              key: 'machine',
              header: 'Machine',
              render: (t) => t.consumed_by_machine_id ?? t.machine_id ?? '—',
            },
            { key: 'created', header: 'Created', render: (t) => formatTime(t.created_at) },
            { key: 'expires', header: 'Expires', render: (t) => formatTime(t.expires_at) },
            {
              key: 'actions',
              header: 'Actions',
              render: (t) =>
                t.status === 'unused' ? (
                  <ConfirmButton
                    label={`Revoke token ${t.id}`}
                    question="Revoke this token?"
                    onConfirm={() =>
                      act(
                        () => api.del(`/api/remote/machines/registration-tokens/${t.id}`),
                        `Token ${t.id} revoked`,
                      )
                    }
                  >
                    Revoke
                  </ConfirmButton>
                ) : null,
            },
          ]}
        />
      </Loaded>
    </ManagePage>
  );
}
