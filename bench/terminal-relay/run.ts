// Terminal relay latency (issue 14 "Measure": keystroke-to-echo p50 over loopback, aim < 50 ms). Real API
// (+ worker), the real agent program with its script(1) pseudo-terminal running bash, a `ws` client as the
// browser. For each of N keystrokes, typed one at a time: a binary frame with one letter is sent, and the
// time until that letter comes back from the shell's line editor (its echo) is recorded. The path is
// browser -> WebSocket -> relay hub -> the agent's held long poll -> pty -> bash echo -> pty -> the agent's
// output POST -> relay hub -> WebSocket -> browser.
//
//   npx tsx bench/terminal-relay/run.ts [--keys 1000]
//   DATABASE_URL=postgres://postgres:postgres@127.0.0.1:5432/postgres npx tsx bench/terminal-relay/run.ts
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findTemporalCli } from '../../bin/temporal-cli.ts';
import { startDevServer } from '../../bin/temporal-dev.ts';
import { createTenant } from '../../test/support/actors.ts';
import { usingPostgres } from '../../test/support/database.ts';
import { ADMIN, startTestApp } from '../../test/support/harness.ts';
import { registrationToken, startAgent, waitUntil } from '../../test/support/remote.ts';
import { api, login } from '../../test/support/session.ts';
import { openTerminal, terminalUrl } from '../../test/support/terminal-client.ts';
import { machine, percentile } from '../support/stats.ts';

const argv = process.argv.slice(2);
const KEYS = Number(argv[argv.indexOf('--keys') + 1]) || 1000;
const WARMUP = 20;
const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
const now = () => performance.now();

async function main() {
  const cliPath = await findTemporalCli({
    explicit: process.env.TEMPORAL_CLI_PATH,
    log: (l) => process.stderr.write(`${l}\n`),
  });
  const dev = await startDevServer({ cliPath, ephemeralPorts: true, inMemory: true });
  process.env.TEST_TEMPORAL_ADDRESS = dev.address;
  const app = await startTestApp({ worker: true, env: { LOG_LEVEL: 'warn' } });
  const admin = await login(app.url, ADMIN.username, ADMIN.password);
  const tenantId = await createTenant(app, admin);
  const agent = startAgent({
    serverUrl: app.url,
    registrationToken: await registrationToken(app.url, admin, tenantId),
    extra: { log_level: 'WARNING', heartbeat_interval: 5 },
  });
  const samples: number[] = [];
  try {
    const machineId: string = await waitUntil(
      'agent registration',
      async () => agent.config().agent_token && agent.config().machine_id,
      30000,
    );
    await waitUntil(
      'machine online',
      async () =>
        (await api(app.url, 'GET', `/api/remote/machines/${machineId}`, { auth: admin })).body.status ===
        'online',
      30000,
    );
    const created = await api(app.url, 'POST', '/api/remote/sessions', {
      auth: admin,
      body: { machine_id: machineId, project_path: mkdtempSync(path.join(os.tmpdir(), 'svc-bench-term-')) },
    });
    if (created.status !== 201)
      throw new Error(`create session: ${created.status} ${JSON.stringify(created.body)}`);
    const sessionId: string = created.body.session_id;
    await waitUntil('agent session', async () => {
      const r = await api(app.url, 'GET', `/api/remote/sessions/${sessionId}/output`, { auth: admin });
      return r.body.events?.some((e: any) => e.stream === 'system');
    });
    const t = openTerminal(terminalUrl(app.url, sessionId, { cols: 200, rows: 50 }), { token: admin.token });
    await t.opened;
    t.type('echo ready-$((1+1))\r');
    await t.waitFor('ready-2');
    await new Promise((r) => setTimeout(r, 300));
    for (let i = 0; i < WARMUP + KEYS; i++) {
      if (i % 100 === 99) {
        // Clear the line now and then (Ctrl-U) so the line editor never wraps.
        const mark = t.text().length;
        t.type('\x15');
        await t.waitFor('\r', 5000, mark).catch(() => undefined);
        await new Promise((r) => setTimeout(r, 20));
      }
      const ch = LETTERS[i % LETTERS.length]!;
      const from = t.text().length;
      const sent = now();
      t.type(ch);
      await t.waitFor(ch, 5000, from);
      if (i >= WARMUP) samples.push(now() - sent);
    }
    t.close();
    await t.closed;
  } finally {
    await agent.stop();
    await app.close();
    await dev.stop();
  }
  const fmt = (n: number) => n.toFixed(2).padStart(7);
  const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
  console.log(
    `\nTerminal relay keystroke -> echo, ${KEYS} keystrokes one at a time, ${usingPostgres() ? 'PostgreSQL' : 'SQLite'}, ${machine()}`,
  );
  console.log('            p50     p90     p99    mean     max   (ms)');
  console.log(
    `        ${fmt(percentile(samples, 0.5))} ${fmt(percentile(samples, 0.9))} ${fmt(percentile(samples, 0.99))} ${fmt(mean)} ${fmt(Math.max(...samples))}`,
  );
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
