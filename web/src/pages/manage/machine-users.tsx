// The users of one machine, opened from the machines table: who is assigned and with which permission
// (GET /api/remote/machines/<id>/users), assign a user of the machine's tenant (POST …/assign) and
// unassign (DELETE …/assign/<uid>, confirmed: their sessions on it end). The API decides: a machine
// administrator assigns only as `user` and never removes an `admin`, so the permission picker is
// offered to system administrators only. The people to pick from come from GET /api/admin/users
// (administrators and managers); anyone else types the user id.
import { useState } from 'preact/hooks';
import { api } from '../../api/client.ts';
import { isSystemAdmin, mayViewUsers } from '../../auth/access.ts';
import { useAuth } from '../../auth/session.tsx';
import { ConfirmButton } from '../../ui/confirm.tsx';
import { Button, ErrorBox, Field, formatTime, Table } from '../../ui/index.ts';
import { Loaded } from '../../ui/loaded.tsx';
import { SelectField } from '../../ui/select-field.tsx';
import { useAction } from '../../ui/use-action.ts';
import { useSubmit } from '../../ui/use-submit.ts';
import { Done, useFocusOnOpen } from './layout.tsx';
import type { Machine, User } from './types.ts';
import { useResource } from './use-resource.ts';

interface Assigned {
  user_id: number;
  username: string;
  role?: string;
  permission: string;
  granted_at: string;
}

const PERMISSION_OPTIONS = [
  { value: 'user', label: 'user (may start sessions)' },
  { value: 'admin', label: 'admin (machine administrator)' },
];

export function MachineUsers({ machine, onClose }: { machine: Machine; onClose: () => void }) {
  const heading = useFocusOnOpen<HTMLHeadingElement>();
  const { viewer } = useAuth();
  const system = !!viewer && isSystemAdmin(viewer);
  const name = machine.machine_name ?? machine.machine_id;
  const base = `/api/remote/machines/${encodeURIComponent(machine.machine_id)}`;
  const assigned = useResource(
    (signal) => api.get<{ users: Assigned[] }>(`${base}/users`, { signal }),
    [base],
  );
  // A machine administrator without view_users cannot list people: they type the id instead.
  const listsPeople = !!viewer && mayViewUsers(viewer);
  const people = useResource(
    async (signal): Promise<User[]> =>
      listsPeople
        ? (await api.get<{ users: User[] }>('/api/admin/users', { signal })).users.filter(
            (u) => u.is_active && u.tenant_id === machine.tenant_id,
          )
        : [],
    [machine.tenant_id, listsPeople],
  );
  const [userId, setUserId] = useState('');
  const [permission, setPermission] = useState('user');
  const [done, setDone] = useState<string | null>(null);

  const { busy, error, submit } = useSubmit(async () => {
    setDone(null);
    const id = Number(userId);
    if (!Number.isInteger(id) || id <= 0) throw new Error('Choose the user to assign');
    await api.post(`${base}/assign`, { user_id: id, permission: system ? permission : 'user' });
    const who = people.data?.find((u) => u.id === id)?.username ?? `user ${id}`;
    setDone(`${who} assigned to ${name}`);
    setUserId('');
    void assigned.reload();
  });
  const { act, error: actError } = useAction((msg) => {
    setDone(msg);
    void assigned.reload();
  });
  const taken = new Set((assigned.data?.users ?? []).map((u) => u.user_id));
  const choices = (people.data ?? [])
    .filter((u) => !taken.has(u.id))
    .map((u) => ({ value: String(u.id), label: `${u.username} (${u.role})` }));

  return (
    <section class="panel" aria-labelledby="mu-h">
      <h2 id="mu-h" tabIndex={-1} ref={heading}>
        Users of {name}
      </h2>
      <Done message={done} />
      <ErrorBox error={actError} />
      <ErrorBox error={people.error} />
      <form onSubmit={submit} aria-label={`Assign a user to ${name}`}>
        <ErrorBox error={error} />
        <div class="form-grid">
          {listsPeople ? (
            <SelectField
              label="User to assign"
              value={userId}
              onValue={setUserId}
              options={[
                { value: '', label: choices.length ? 'Choose a user' : 'Everyone is assigned' },
                ...choices,
              ]}
            />
          ) : (
            <Field
              label="User id to assign"
              value={userId}
              onValue={setUserId}
              hint="The user's number; they must belong to the machine's tenant"
            />
          )}
          {system && (
            <SelectField
              label="Permission on this machine"
              value={permission}
              onValue={setPermission}
              options={PERMISSION_OPTIONS}
            />
          )}
        </div>
        <div class="form-actions">
          <Button type="submit" variant="primary" busy={busy}>
            Assign
          </Button>
          <Button variant="link" onClick={onClose}>
            Close
          </Button>
        </div>
      </form>
      <Loaded of={assigned}>
        <Table
          caption={`Assigned to ${name}`}
          rowKey={(u) => u.user_id}
          rows={assigned.data?.users ?? []}
          empty="Nobody is assigned to this machine yet."
          columns={[
            { key: 'username', header: 'User', render: (u) => <span class="cell-wrap">{u.username}</span> },
            { key: 'permission', header: 'Permission' },
            { key: 'granted', header: 'Since', render: (u) => formatTime(u.granted_at) },
            {
              key: 'actions',
              header: 'Actions',
              // Only a system administrator removes a machine administrator (the API refuses others).
              render: (u) =>
                (system || u.permission !== 'admin') && (
                  <ConfirmButton
                    label={`Unassign ${u.username}`}
                    question={`Unassign ${u.username}? Their sessions on this machine end.`}
                    onConfirm={() =>
                      act(
                        () => api.del(`${base}/assign/${u.user_id}`),
                        `${u.username} unassigned from ${name}`,
                      )
                    }
                  >
                    Unassign
                  </ConfirmButton>
                ),
            },
          ]}
        />
      </Loaded>
    </section>
  );
}
