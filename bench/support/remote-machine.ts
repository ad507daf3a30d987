// A real agent (agent/main.ts, test/support/remote.ts startAgent) registered and online, for the
// benchmarks of the remote workspace (bench/remote, bench/terminal-relay): a new tenant, a
// registration token, the agent polling `agentUrl`, and the wait until the machine is online; then
// remote sessions on it in fresh temp project folders. Requests go to `url` with `auth` headers (a
// session cookie or a bearer token); with two API instances the agent may poll the other one.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type AgentProcess, startAgent, waitUntil } from '../../test/support/remote.ts';
import { api } from '../../test/support/session.ts';

export interface OnlineMachine {
  agent: AgentProcess;
  machineId: string;
  tenantId: number;
  /** POST /api/remote/sessions on this machine in a new temp folder; the session id. */
  createSession(): Promise<string>;
}

export async function onlineMachine(opts: {
  url: string;
  auth: Record<string, string>;
  /** The instance the agent polls (default `url`). */
  agentUrl?: string;
  /** Agent config over startAgent's defaults (cli_path, log_level, heartbeat_interval...). */
  extra?: Record<string, unknown>;
}): Promise<OnlineMachine> {
  const { url, auth } = opts;
  const call = async (method: string, p: string, body?: unknown, want = 201) => {
    const r = await api(url, method, p, { auth, body });
    if (r.status !== want) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const slug = `bench-${Date.now().toString(36)}`;
  const tenantId: number = (await call('POST', '/api/tenants', { name: slug, slug })).tenant.id;
  const { registration_token } = await call('POST', '/api/remote/machines/register', { tenant_id: tenantId });
  const agent = startAgent({
    serverUrl: opts.agentUrl ?? url,
    registrationToken: registration_token,
    extra: opts.extra,
  });
  try {
    const machineId: string = await waitUntil(
      'agent registration',
      async () => agent.config().agent_token && agent.config().machine_id,
      30000,
    );
    await waitUntil(
      'machine online',
      async () =>
        (await call('GET', `/api/remote/machines/${machineId}`, undefined, 200)).status === 'online',
      30000,
    );
    const createSession = async () => {
      const project = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'));
      const created = await call('POST', '/api/remote/sessions', {
        machine_id: machineId,
        project_path: project,
      });
      return created.session_id as string;
    };
    return { agent, machineId, tenantId, createSession };
  } catch (err) {
    await agent.stop();
    throw err;
  }
}
