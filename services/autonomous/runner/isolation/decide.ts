// Whether the autonomous runner isolates the agent CLI, decided from the settings and the host
// (spec document 2, "Execution isolation rules"; SVC_AUTONOMOUS_ISOLATION, SVC_AUTONOMOUS_AGENT_USER,
// autonomous.agent_task_cgroup_enabled):
//   off       never (the integrity check of the Git metadata still runs around every CLI run);
//   auto      when the service runs as root (it must switch to the account) and the account passes
//             the rules of agent-account.ts; otherwise the CLI runs as the service account, and the
//             reason is logged once at start (isolationNotice);
//   required  as auto, but a step that cannot be isolated is refused with the reason.
// Per-task cgroup limits: `on` requires an available cgroup v2 hierarchy (refused with the reason
// otherwise), `auto` uses it when available, `off` never.
import { execFileSync } from 'node:child_process';
import type { Settings } from '../../../../config/settings.ts';
import { type AgentAccount, lookupAgentAccount } from './agent-account.ts';
import { cgroupAvailability } from './cgroup.ts';

export type IsolationDecision =
  | { kind: 'isolated'; account: AgentAccount; cgroupMount: string | null; cgroupNote: string }
  | { kind: 'unisolated'; reason: string }
  | { kind: 'refused'; reason: string };

type IsolationSettings = Pick<Settings, 'SVC_AUTONOMOUS_ISOLATION' | 'SVC_AUTONOMOUS_AGENT_USER'> & {
  autonomous: Pick<Settings['autonomous'], 'agent_task_cgroup_enabled'>;
};

let aclTools: boolean | undefined;
function hasAclTools(): boolean {
  if (aclTools === undefined) {
    try {
      execFileSync('setfacl', ['--version'], { stdio: 'ignore' });
      execFileSync('getfacl', ['--version'], { stdio: 'ignore' });
      aclTools = true;
    } catch {
      aclTools = false;
    }
  }
  return aclTools;
}

export function decideIsolation(settings: IsolationSettings, ownerUids: number[] = []): IsolationDecision {
  const mode = settings.SVC_AUTONOMOUS_ISOLATION;
  const name = settings.SVC_AUTONOMOUS_AGENT_USER;
  if (mode === 'off')
    return { kind: 'unisolated', reason: 'execution isolation is off (SVC_AUTONOMOUS_ISOLATION=off)' };
  const uid = process.getuid?.() ?? -1;
  const unavailable = (reason: string): IsolationDecision =>
    mode === 'required'
      ? {
          kind: 'refused',
          reason: `execution isolation is required (SVC_AUTONOMOUS_ISOLATION=required) but ${reason}`,
        }
      : { kind: 'unisolated', reason };
  if (uid !== 0)
    return unavailable(
      `the service does not run as root (uid ${uid}), so it cannot start the CLI as the agent account ${name}`,
    );
  if (!hasAclTools())
    return unavailable('setfacl/getfacl are not installed (the `acl` package), so access cannot be granted');
  const check = lookupAgentAccount(name, { serviceUid: uid, ownerUids });
  if (!check.ok) return unavailable(`${check.reason} (create it with \`npm run agent-account:install\`)`);
  const switchValue = settings.autonomous.agent_task_cgroup_enabled;
  if (switchValue === 'off')
    return {
      kind: 'isolated',
      account: check.account,
      cgroupMount: null,
      cgroupNote: 'per-task cgroup limits are off',
    };
  const cg = cgroupAvailability();
  if (!cg.ok && switchValue === 'on')
    return {
      kind: 'refused',
      reason: `per-task cgroup limits are on (agent_task_cgroup_enabled=on) but unavailable: ${cg.reason}`,
    };
  return {
    kind: 'isolated',
    account: check.account,
    cgroupMount: cg.ok ? cg.mount : null,
    cgroupNote: cg.ok
      ? `per-task cgroup limits under ${cg.mount}`
      : `no per-task cgroup limits: ${cg.reason}`,
  };
}

/** The one line said at start about what the runner will do. */
export function isolationNotice(settings: IsolationSettings): { level: 'info' | 'warn'; message: string } {
  const d = decideIsolation(settings);
  if (d.kind === 'isolated')
    return {
      level: 'info',
      message: `autonomous agent CLIs run as ${d.account.name} (uid ${d.account.uid}) with an empty environment; ${d.cgroupNote}`,
    };
  if (d.kind === 'refused')
    return { level: 'warn', message: `autonomous agent steps will be refused: ${d.reason}` };
  return {
    level: 'warn',
    message: `autonomous agent CLIs run WITHOUT account isolation (as the service account): ${d.reason}; the Git metadata integrity check still applies`,
  };
}
