// The turn watchdog and turn errors of agent/session.ts, with a tiny stream-json CLI (written per test
// run) on the cli_beta adapter: a CLI that goes silent in a turn is reported (`turn_stalled`) and
// restarted with --resume; retry lines do not count as progress; a permission request waiting on the
// user is not a stall; a `result` with is_error becomes a `turn_error` note.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { getAdapter } from '../../agent/adapters.ts';
import { SessionChannel } from '../../agent/channel.ts';
import { Logger } from '../../agent/log.ts';
import type { AgentEvent } from '../../agent/protocol.ts';
import { Session } from '../../agent/session.ts';

const dir = mkdtempSync(join(tmpdir(), 'svc-watchdog-'));
const CLI = join(dir, 'stuck-cli.mjs');
// MODE: hang (no answer), retry (api_retry lines only), permission (asks, then hangs), error (is_error).
writeFileSync(
  CLI,
  `#!/usr/bin/env node
import readline from 'node:readline';
const out = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
const mode = process.env.MODE;
const resumed = process.argv.includes('--resume');
out({ type: 'system', subtype: 'init', session_id: 'conv-1', resumed });
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const msg = JSON.parse(line);
  if (msg.type === 'control_response') return;
  if (resumed || mode === 'error')
    return out({ type: 'result', subtype: 'success', is_error: mode === 'error', result: mode === 'error' ? 'API Error: 529 overloaded' : 'ok' });
  if (mode === 'retry') setInterval(() => out({ type: 'system', subtype: 'api_retry', attempt: 1 }), 50);
  if (mode === 'permission') out({ type: 'control_request', request_id: 'r1', request: { subtype: 'can_use_tool', tool_name: 'Write', input: {} } });
});
setInterval(() => {}, 1000);
`,
);
chmodSync(CLI, 0o755);

function run(mode: string, stallMs: number) {
  const events: AgentEvent[] = [];
  const channel = new SessionChannel('s-1', (e) => events.push(e));
  const session = new Session(
    {
      sessionId: 's-1',
      adapter: getAdapter('cli_beta'),
      executable: CLI,
      projectPath: dir,
      proxyToken: 't',
      proxyBaseUrl: 'http://127.0.0.1:9',
      cliEnv: { MODE: mode },
      stopGraceMs: 500,
      turnStallTimeoutMs: stallMs,
    },
    channel,
    new Logger('ERROR'),
    () => {},
  );
  const notes = (event: string) =>
    events
      .filter((e) => e.type === 'output' && e.stream === 'system')
      .map((e) => JSON.parse((e as { data: string }).data))
      .filter((d) => d.event === event);
  const lines = () =>
    events
      .filter((e) => e.type === 'output' && e.stream === 'stdout')
      .map((e) => (e as { data: string }).data);
  return { session, notes, lines, events };
}

async function until<T>(what: string, fn: () => T | undefined, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('turn watchdog', () => {
  it('a silent turn is reported and the CLI restarted with --resume; the next turn works', async () => {
    // 1 s: a resumed CLI must answer 'again' within it even on a loaded machine.
    const { session, notes, lines } = run('hang', 1000);
    session.start();
    await until('init', () => lines().length > 0, 15000);
    const t0 = Date.now();
    session.input('hello');
    const stalled = await until('turn_stalled', () => notes('turn_stalled')[0]);
    assert.ok(Date.now() - t0 >= 980);
    assert.equal(stalled.timeout_ms, 1000);
    const restarted = await until('restart', () => notes('started')[1], 15000);
    assert.equal(restarted.resumed, true);
    session.input('again');
    await until('result after the restart', () => lines().some((l) => l.includes('"type":"result"')), 15000);
    await sleep(1200);
    assert.equal(notes('turn_stalled').length, 1, 'no stall once the turn ended');
    await session.stop();
  });

  it('retry lines are not progress: a CLI stuck retrying is reported', async () => {
    const { session, notes } = run('retry', 400);
    session.start();
    session.input('hello');
    await until('turn_stalled', () => notes('turn_stalled')[0]);
    await session.stop();
  });

  it('a permission request waiting on the user is not a stall; after the answer the watchdog runs again', async () => {
    // The stall limit is well above how long the CLI takes to ask on a loaded machine: the test is
    // about the wait on the user, not about how fast the request comes.
    const { session, notes, lines, events } = run('permission', 1500);
    session.start();
    await until('init', () => lines().length > 0, 15000);
    session.input('hello');
    await until(
      'the permission request',
      () => events.some((e) => e.type === 'output' && e.stream === 'permission'),
      15000,
    );
    await sleep(2500);
    assert.equal(notes('turn_stalled').length, 0);
    session.permissionResponse('r1', 'allow');
    await until('turn_stalled', () => notes('turn_stalled')[0], 15000);
    await session.stop();
  });

  it('a result with is_error becomes a turn_error note; no watchdog without a turn', async () => {
    const { session, notes } = run('error', 1500);
    session.start();
    await sleep(1700);
    assert.equal(notes('turn_stalled').length, 0, 'an idle CLI is not stalled');
    session.input('hello');
    const error = await until('turn_error', () => notes('turn_error')[0], 15000);
    assert.equal(error.message, 'API Error: 529 overloaded');
    await sleep(1700);
    assert.equal(notes('turn_stalled').length, 0);
    await session.stop();
  });
});
