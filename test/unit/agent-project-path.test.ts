// project_path confinement on the agent (issue 8 item 8): realpath inside the configured work roots,
// never in or above the agent's own directory, symlinks followed; the agent refuses to start with a
// work root inside its own directory; model names are checked before they become an argument.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import type { AgentConfig } from '../../agent/config.ts';
import { Logger } from '../../agent/log.ts';
import type { AgentEvent } from '../../agent/protocol.ts';
import { SessionManager } from '../../agent/sessions.ts';
import {
  confineProjectPath,
  MODEL_PATTERN,
  resolveWorkRoots,
  WorkRootsError,
} from '../../agent/work-roots.ts';

function layout() {
  const base = mkdtempSync(join(tmpdir(), 'confine-'));
  const root = join(base, 'work');
  const agentDir = join(root, '.svc-agent');
  const project = join(root, 'project');
  const outside = join(base, 'outside');
  for (const d of [root, agentDir, project, outside]) mkdirSync(d, { recursive: true });
  symlinkSync(outside, join(project, 'escape'));
  symlinkSync(agentDir, join(project, 'agent-link'));
  return { base, root, agentDir, project, outside };
}

describe('agent work roots', () => {
  it('accepts a directory inside a root and refuses /, the agent dir, its parents, .. escapes and symlinks out', () => {
    const l = layout();
    const limits = resolveWorkRoots({ work_roots: [l.root], work_dir: '' }, [l.agentDir]);
    const ok = confineProjectPath(l.project, '', limits);
    assert.deepEqual(ok, { ok: true, path: l.project });
    const refused = (p: string, workDir = '') => {
      const r = confineProjectPath(p, workDir, limits);
      assert.equal(r.ok, false, p);
      return (r as { error: string }).error;
    };
    assert.match(refused('/'), /is or contains the agent's own directory; refused/);
    assert.match(refused(l.outside), /is outside this machine's work roots/);
    assert.match(refused('/etc'), /is outside this machine's work roots/);
    assert.match(refused(l.agentDir), /is or contains the agent's own directory; refused/);
    assert.match(
      refused(join(l.agentDir, '..')),
      /is or contains the agent's own directory/,
      'the root itself holds it',
    );
    assert.match(
      refused(join(l.project, 'agent-link')),
      /agent's own directory/,
      'symlink into the agent dir',
    );
    assert.match(
      refused(join(l.project, 'escape')),
      /outside this machine's work roots/,
      'symlink out of the root',
    );
    const dotdot = relative(l.project, '/etc');
    assert.match(refused(dotdot, l.project), /outside this machine's work roots/, `relative ${dotdot}`);
    assert.match(refused(join(l.project, 'missing')), /is not a directory on this machine/);
    assert.match(refused('bad\0path'), /NUL/);
    assert.match(refused(''), /project_path is required/);
  });

  it('refuses to start when a work root lies inside the agent directory', () => {
    const l = layout();
    assert.throws(
      () => resolveWorkRoots({ work_roots: [l.agentDir], work_dir: '' }, [l.agentDir]),
      (err: Error) =>
        err instanceof WorkRootsError && /lies inside the agent's own directory/.test(err.message),
    );
    assert.throws(
      () => resolveWorkRoots({ work_roots: ['relative/dir'], work_dir: '' }, []),
      /absolute path/,
    );
    assert.throws(
      () => resolveWorkRoots({ work_roots: [join(l.base, 'nope')], work_dir: '' }, []),
      /not an existing/,
    );
    // Default: work_dir, else the home directory.
    assert.deepEqual(resolveWorkRoots({ work_roots: [], work_dir: l.project }, []).roots, [l.project]);
  });

  it('model names: a safe argument only', () => {
    for (const good of ['gpt-4o', 'claude-3-5-sonnet@20240620', 'openai/gpt-4.1', 'llama3:8b'])
      assert.ok(MODEL_PATTERN.test(good), good);
    for (const bad of ['--dangerously-skip-permissions', '-m', 'a b', 'x;rm', '', 'a'.repeat(129), 'm\n'])
      assert.ok(!MODEL_PATTERN.test(bad), JSON.stringify(bad));
    const start = Date.now();
    MODEL_PATTERN.test(`${'a'.repeat(100_000)}!`);
    assert.ok(Date.now() - start < 50, 'linear');
  });

  it('the session manager refuses a start outside the roots with a system note the browser sees', async () => {
    const l = layout();
    const events: AgentEvent[] = [];
    const config = {
      cli_tool: 'cli_alpha',
      cli_path: '/bin/true',
      cli_env: {},
      max_sessions: 5,
      work_dir: '',
      work_roots: [l.root],
      stop_grace_period: 1,
    } as unknown as AgentConfig;
    const sessions = new SessionManager(config, (e) => events.push(e), new Logger('ERROR'), {
      workRoots: resolveWorkRoots(config, [l.agentDir]),
    });
    const start = (id: string, payload: Record<string, unknown>) =>
      sessions.handle({
        command_id: `c-${id}`,
        command_type: 'session.start',
        session_id: id,
        payload: { proxy_token: 't', proxy_base_url: 'http://x', ...payload },
      });
    const r = await start('s-agent', { project_path: l.agentDir });
    assert.equal(r.ok, false);
    assert.match(String(r.error), /agent's own directory; refused/);
    const note = events.find((e) => e.type === 'output' && e.stream === 'system');
    assert.ok(note && note.type === 'output');
    const data = JSON.parse(note.data);
    assert.equal(data.event, 'start_refused');
    assert.match(data.message, /agent's own directory; refused/);
    assert.ok(
      events.some((e) => e.type === 'session_state' && e.session_id === 's-agent' && e.state === 'exited'),
    );

    const badModel = await start('s-model', { project_path: l.project, model: '--yolo' });
    assert.equal(badModel.ok, false);
    assert.match(String(badModel.error), /^model must be 1-128 letters/);
    assert.deepEqual(sessions.activeSessionIds(), []);
  });
});
