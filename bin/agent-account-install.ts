// `npm run agent-account:install [name]`: creates (or checks) the dedicated account the autonomous
// runner starts agent CLIs as (services/autonomous/runner/isolation/install-account.ts). The name is
// the argument, else SVC_AUTONOMOUS_AGENT_USER, else `svc-agent`. Exit 0: the account exists and
// passes the isolation rules; 1: it could not be created or is refused (the reason is printed).
import { installAgentAccount } from '../services/autonomous/runner/isolation/install-account.ts';

const name = process.argv[2] ?? process.env.SVC_AUTONOMOUS_AGENT_USER ?? 'svc-agent';
if (!/^[a-z_][a-z0-9_-]{0,31}$/.test(name)) {
  console.error(`not a valid account name: ${name}`);
  process.exit(1);
}
try {
  const r = installAgentAccount(name);
  if (!r.ok) {
    console.error(`agent account ${name}: ${r.reason}`);
    process.exit(1);
  }
  console.log(
    `agent account ${name} ${r.created ? 'created' : 'already present'}: uid ${r.account.uid}, gid ${r.account.gid}, shell ${r.account.shell}, home ${r.account.home}`,
  );
} catch (err) {
  console.error(`could not create the agent account ${name}: ${(err as Error).message}`);
  process.exit(1);
}
