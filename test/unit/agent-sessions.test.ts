// SessionManager in-process: command validation and a CLI that cannot be started.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { AgentConfig } from '../../agent/config.ts';
import { Logger } from '../../agent/log.ts';
import type { AgentEvent } from '../../agent/protocol.ts';
import { SessionManager } from '../../agent/sessions.ts';

function manager(overrides: Partial<AgentConfig> = {}) {
  const events: AgentEvent[] = [];
  const config = {
    cli_tool: 'cli_alpha',
    cli_path: join(tmpdir(), 'no-such-cli-here'),
    cli_env: {},
    max_sessions: 5,
    work_dir: '',
    work_roots: [tmpdir()],
    stop_grace_period: 1,
    ...overrides,
  } as AgentConfig;
  return { events, sessions: new SessionManager(config, (e) => events.push(e), new Logger('ERROR')) };
}

const start = (sessionId: string, payload: Record<string, unknown> = {}) => ({
  command_id: `c-${sessionId}`,
  command_type: 'session.start',
  session_id: sessionId,
  payload: {
    project_path: mkdtempSync(join(tmpdir(), 'proj-')),
    proxy_token: 't',
    proxy_base_url: 'http://x',
    ...payload,
  },
});

describe('agent session manager', () => {
  it('reports a CLI that cannot be started, with a hint, and ends the session', async () => {
    const { events, sessions } = manager();
    assert.equal((await sessions.handle(start('s1'))).ok, true);
    const deadline = Date.now() + 3000;
    const exited = () => events.some((e) => e.type === 'session_state' && e.state === 'exited');
    while (!exited() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.ok(exited(), 'exited state emitted');
    const note = events.find((e) => e.type === 'output' && e.data.includes('start_failed'));
    assert.ok(note && note.type === 'output');
    assert.match(note.data, /installed and on PATH, or cli_path set/);
    assert.deepEqual(sessions.activeSessionIds(), []);
  });

  it('validates commands and answers every one', async () => {
    const { sessions } = manager({ cli_path: '/bin/cat' });
    assert.deepEqual(await sessions.handle({ command_id: 'p', command_type: 'ping' }), {
      ok: true,
      pong: true,
    });
    assert.match(
      String(
        (await sessions.handle({ command_id: 'x', command_type: 'session.fly', session_id: 'nope' })).error,
      ),
      /unknown session/,
    );
    assert.match(String((await sessions.handle(start('s2', { proxy_token: '' }))).error), /proxy_token/);
    assert.match(
      String((await sessions.handle(start('s3', { cli_tool: '../evil' }))).error),
      /invalid cli_tool/,
    );
    assert.equal((await sessions.handle(start('s4'))).ok, true);
    assert.equal((await sessions.handle(start('s4'))).already_running, true);
    const bad = [
      { command_type: 'session.input', payload: {} },
      { command_type: 'session.set_model', payload: { model: '' } },
      { command_type: 'session.rotate_token', payload: {} },
      { command_type: 'session.permission_response', payload: { request_id: 'r', decision: 'maybe' } },
      { command_type: 'session.permission_response', payload: { request_id: 'r', decision: 'allow' } },
      { command_type: 'session.teleport', payload: {} },
    ];
    for (const b of bad) {
      const res = await sessions.handle({ command_id: 'b', session_id: 's4', ...b });
      assert.equal(res.ok, false, `${b.command_type} ${JSON.stringify(b.payload)}`);
      assert.equal(typeof res.error, 'string');
    }
    await sessions.stopAll();
    assert.deepEqual(sessions.activeSessionIds(), []);
  });
});
