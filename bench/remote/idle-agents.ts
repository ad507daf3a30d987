// Many idle agents in one process, for bench/remote --agents (issue 31 item 4). Each is a real machine
// speaking agent/PROTOCOL.md through the agent's own code: registration with its own one-time token
// (agent/transport.ts postRegister), then the agent's Poller (agent/poller.ts): one long poll always
// open, a heartbeat request every `heartbeat_interval`, backoff on failure. No CLI: they receive no
// commands. A process of their own so that neither the API nor the bench's measuring loop shares
// their event loop.
//
// stdin: one JSON line {"urls": ["http://..."], "tokens": ["..."], "heartbeat_s": 60}; agent i polls
// urls[i % urls.length]. stdout: "registered <n>" once all are registered and polling; stops on SIGTERM.
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { Logger } from '../../agent/log.ts';
import { Outbox } from '../../agent/outbox.ts';
import { Poller } from '../../agent/poller.ts';
import { AgentTransport, isRegisterResponse, postRegister } from '../../agent/transport.ts';
import { AGENT_VERSION } from '../../agent/version.ts';

const REGISTER_CONCURRENCY = 8;

const input = await new Promise<string>((resolve) =>
  createInterface({ input: process.stdin }).once('line', resolve),
);
const { urls, tokens, heartbeat_s } = JSON.parse(input) as {
  urls: string[];
  tokens: string[];
  heartbeat_s: number;
};
const log = new Logger('WARNING');
const pollers: Poller[] = [];

async function startOne(i: number): Promise<void> {
  const url = urls[i % urls.length]!;
  const machineId = randomUUID();
  const r = await postRegister(url, {
    registration_token: tokens[i]!,
    machine_id: machineId,
    machine_name: `idle-${i}`,
    hostname: `idle-${i}`,
    os_type: 'linux',
    os_version: 'bench',
    capabilities: { cli_tools: ['cli_alpha'], transports: ['http_polling'] },
    agent_version: AGENT_VERSION,
    cli_path: '',
    work_dir: '',
  });
  if (!isRegisterResponse(r.body)) throw new Error(`register ${i}: ${r.status} ${JSON.stringify(r.body)}`);
  const poller = new Poller(
    new AgentTransport(url, r.body.agent_token, r.body.machine_id ?? machineId),
    new Outbox(),
    { waitMs: 25_000, heartbeatMs: heartbeat_s * 1000, baseDelayMs: 1000, maxDelayMs: 60_000 },
    () => ({ active_sessions: [], agent_version: AGENT_VERSION }),
    () => {},
    (err) => log.error('idle agent stopped', { agent: i, error: err.message }),
    log,
  );
  poller.start();
  pollers.push(poller);
}

let next = 0;
await Promise.all(
  Array.from({ length: REGISTER_CONCURRENCY }, async () => {
    while (next < tokens.length) await startOne(next++);
  }),
);
process.stdout.write(`registered ${pollers.length}\n`);
process.on('SIGTERM', () => {
  void Promise.all(pollers.map((p) => p.stop())).then(() => process.exit(0));
});
