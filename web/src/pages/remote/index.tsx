// Remote workspace (issue 14 item 3; spec document 1 "Remote workspace"): the caller's remote sessions
// (GET /api/remote/sessions) and a form to start one on an available machine
// (GET /api/remote/machines/available, POST /api/remote/sessions: machine, project path, tool, model).
// A created session opens its page (./session.tsx).

import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api } from '../../api/client.ts';
import { Button, ErrorBox, Field, formatNumber, formatTime, Loading, Table } from '../../ui/index.ts';
import { SelectField } from '../../ui/select-field.tsx';
import { useLoad } from '../../ui/use-load.ts';
import { machineLabel, type RemoteMachine, type RemoteSession, sessionStatusWord, toolsOf } from './types.ts';
import './remote.css';

function NewSession({ machines }: { machines: RemoteMachine[] }) {
  const { route } = useLocation();
  const [machineId, setMachineId] = useState(machines[0]?.machine_id ?? '');
  const machine = machines.find((m) => m.machine_id === machineId);
  const tools = toolsOf(machine);
  const [path, setPath] = useState('');
  const [tool, setTool] = useState('');
  const [model, setModel] = useState('');
  const [title, setTitle] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const chosenTool = tool || tools[0];
      const r = await api.post<{ session_id: string }>('/api/remote/sessions', {
        machine_id: machineId,
        project_path: path.trim(),
        ...(chosenTool ? { cli_tool: chosenTool } : {}),
        ...(model.trim() ? { model: model.trim() } : {}),
        ...(title.trim() ? { title: title.trim() } : {}),
      });
      route(`/remote/sessions/${encodeURIComponent(r.session_id)}`);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  if (!machines.length)
    return (
      <p class="muted">
        No machine is available to you right now. A machine appears here when its agent is online and you are
        assigned to it.
      </p>
    );
  return (
    <form class="remote-new" onSubmit={submit} aria-label="New remote session">
      <SelectField
        label="Machine"
        value={machineId}
        onValue={(v) => {
          setMachineId(v);
          setTool('');
        }}
        options={machines.map((m) => ({ value: m.machine_id, label: machineLabel(m) }))}
      />
      <Field
        label="Project path"
        value={path}
        onValue={setPath}
        required
        hint={
          machine?.work_dir ? `On the machine, e.g. under ${machine.work_dir}` : 'A directory on the machine'
        }
      />
      {tools.length > 0 ? (
        <SelectField
          label="Tool"
          value={tool || tools[0]!}
          onValue={setTool}
          options={tools.map((t) => ({ value: t, label: t }))}
        />
      ) : (
        <Field label="Tool" value={tool} onValue={setTool} hint="Empty: the machine's default tool" />
      )}
      <Field label="Model" value={model} onValue={setModel} hint="Optional" />
      <Field label="Title" value={title} onValue={setTitle} hint="Optional" />
      <div class="remote-new-actions">
        <Button type="submit" variant="primary" busy={busy}>
          Start session
        </Button>
      </div>
      <ErrorBox error={error} />
    </form>
  );
}

export default function RemoteWorkspace() {
  const machines = useLoad(
    (signal) => api.get<{ machines: RemoteMachine[] }>('/api/remote/machines/available', { signal }),
    [],
  );
  const sessions = useLoad(
    (signal) => api.get<{ sessions: RemoteSession[] }>('/api/remote/sessions', { signal }),
    [],
  );
  return (
    <section>
      <h1>Remote workspace</h1>
      <h2>Start a session</h2>
      <ErrorBox error={machines.error} />
      {machines.loading && !machines.data ? (
        <Loading />
      ) : (
        machines.data && <NewSession machines={machines.data.machines} />
      )}
      <h2>My sessions</h2>
      <ErrorBox error={sessions.error} />
      {sessions.loading && !sessions.data ? (
        <Loading />
      ) : (
        sessions.data && (
          <Table
            caption="Remote sessions"
            rowKey={(s) => s.session_id}
            rows={sessions.data.sessions}
            empty="No remote sessions yet."
            columns={[
              {
                key: 'title',
                header: 'Session',
                render: (s) => (
                  <a href={`/remote/sessions/${encodeURIComponent(s.session_id)}`}>
                    {s.title || s.project_path || s.session_id}
                  </a>
                ),
              },
              { key: 'status', header: 'Status', render: (s) => sessionStatusWord(s) },
              { key: 'tool', header: 'Tool', render: (s) => s.cli_tool ?? '' },
              { key: 'model', header: 'Model', render: (s) => s.model ?? '' },
              {
                key: 'tokens',
                header: 'Tokens',
                numeric: true,
                render: (s) => formatNumber(s.total_tokens ?? 0),
              },
              {
                key: 'created',
                header: 'Started',
                render: (s) => (s.created_at ? formatTime(s.created_at) : ''),
              },
            ]}
          />
        )
      )}
    </section>
  );
}
