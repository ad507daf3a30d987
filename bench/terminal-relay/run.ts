// Terminal relay latency (issue 14 "Measure": keystroke-to-echo p50 over loopback, aim < 50 ms). Real API
// (bench/support/stack.ts, with a worker on a Temporal dev server), the real agent program
// (bench/support/remote-machine.ts) with its script(1) pseudo-terminal running bash, a `ws` client as
// the browser. For each of N keystrokes, typed one at a time: a binary frame with one letter is sent, and the
// time until that letter comes back from the shell's line editor (its echo) is recorded. The path is
// browser -> WebSocket -> relay hub -> the agent's held long poll -> pty -> bash echo -> pty -> the agent's
// output POST -> relay hub -> WebSocket -> browser.
//
//   npx tsx bench/terminal-relay/run.ts [--keys 1000]
//   DATABASE_URL=postgres://postgres:postgres@127.0.0.1:5432/postgres npx tsx bench/terminal-relay/run.ts
import { usingPostgres } from '../../test/support/database.ts';
import { waitUntil } from '../../test/support/remote.ts';
import { api } from '../../test/support/session.ts';
import { openTerminal, terminalUrl } from '../../test/support/terminal-client.ts';
import { onlineMachine } from '../support/remote-machine.ts';
import { BENCH_ADMIN, startStack } from '../support/stack.ts';
import { machine, percentile } from '../support/stats.ts';
import { startBenchTemporal } from '../support/temporal.ts';

const argv = process.argv.slice(2);
const KEYS = Number(argv[argv.indexOf('--keys') + 1]) || 1000;
const WARMUP = 20;
const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
const now = () => performance.now();

async function main() {
  const dev = await startBenchTemporal();
  const stack = await startStack({ admin: BENCH_ADMIN, temporal: dev.address }).catch(async (err) => {
    await dev.stop();
    throw err;
  });
  const admin = stack.admin!;
  const auth = { cookie: admin.cookie };
  const samples: number[] = [];
  let remote: Awaited<ReturnType<typeof onlineMachine>> | undefined;
  try {
    remote = await onlineMachine({
      url: stack.url,
      auth,
      extra: { log_level: 'WARNING', heartbeat_interval: 5 },
    });
    const sessionId = await remote.createSession();
    await waitUntil('agent session', async () => {
      const r = await api(stack.url, 'GET', `/api/remote/sessions/${sessionId}/output`, { auth });
      return r.body.events?.some((e: any) => e.stream === 'system');
    });
    const t = openTerminal(terminalUrl(stack.url, sessionId, { cols: 200, rows: 50 }), {
      token: admin.token,
    });
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
    await remote?.agent.stop();
    await stack.close();
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
