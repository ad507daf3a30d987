// The autonomous runner's pure parts: stdout lines -> activity events and context-overflow detection
// (structured fields only), outcome classification, the compact prompt, the activity bus bound, and
// the per-line CLI home.
import assert from 'node:assert/strict';
import { mkdtempSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { getAdapter } from '../../agent/adapters.ts';
import { loadSettings } from '../../config/settings.ts';
import {
  ActivityBus,
  type AutonomousActivityEvent,
  TooManyActivityListeners,
} from '../../services/autonomous/activity-bus.ts';
import { lineHomePath, prepareLineHome } from '../../services/autonomous/runner/cli-home.ts';
import { buildCompactPrompt } from '../../services/autonomous/runner/compact-prompt.ts';
import {
  contextOverflowCode,
  finalTextOf,
  isContextOverflow,
  lineEvents,
} from '../../services/autonomous/runner/line-events.ts';
import {
  type AttemptFacts,
  classifyAttempt,
  errorEnvelope,
} from '../../services/autonomous/runner/outcome.ts';
import { autonomousExecutable, autonomousProxyBaseUrl } from '../../services/autonomous/runner/run-cli.ts';

const claude = getAdapter('cli_beta');
const codex = getAdapter('cli_gamma');
const gemini = getAdapter('cli_delta');
const eventsOf = (adapter: typeof claude, line: Record<string, unknown>) =>
  lineEvents(line, adapter.inspect(line));

describe('autonomous runner: line events', () => {
  it('stream-json: init, text, tool use, thinking (not emitted), empty text (not emitted), retry, result usage', () => {
    assert.deepEqual(
      eventsOf(claude, {
        type: 'system',
        subtype: 'init',
        session_id: 's-1',
        model: 'm',
        env_keys: ['SECRET'],
      }),
      [{ type: 'system', subtype: 'init', providerSessionId: 's-1', model: 'm' }],
    );
    const assistant = {
      type: 'assistant',
      message: {
        content: [
          { type: 'thinking', thinking: 'secret reasoning' },
          { type: 'text', text: '' },
          { type: 'text', text: '   \n' },
          { type: 'text', text: 'I will edit a.txt' },
          { type: 'tool_use', name: 'Edit', input: { file_path: 'a.txt' } },
        ],
      },
    };
    assert.deepEqual(eventsOf(claude, assistant), [
      { type: 'assistant_text', text: 'I will edit a.txt' },
      { type: 'tool_use', tool: 'Edit', input: '{"file_path":"a.txt"}' },
    ]);
    assert.deepEqual(
      eventsOf(claude, { type: 'assistant', message: { content: [{ type: 'thinking', thinking: 'x' }] } }),
      [],
    );
    assert.deepEqual(
      eventsOf(claude, { type: 'system', subtype: 'api_retry', attempt: 2, error_status: 529 }),
      [{ type: 'retry', attempt: 2, text: 'the CLI retries a model call (status 529)' }],
    );
    assert.deepEqual(
      eventsOf(claude, {
        type: 'result',
        subtype: 'success',
        is_error: false,
        result: 'done',
        usage: { input_tokens: 3, output_tokens: 4 },
      }),
      [{ type: 'usage', usage: { input_tokens: 3, output_tokens: 4, cache_tokens: 0 } }],
    );
    const failed = eventsOf(claude, {
      type: 'result',
      subtype: 'error_during_execution',
      is_error: true,
      result: 'boom',
    });
    assert.deepEqual(failed, [{ type: 'error', text: 'boom' }]);
  });

  it('tool input and text are cut', () => {
    const [tool] = eventsOf(claude, {
      type: 'assistant',
      message: { content: [{ type: 'tool_use', name: 'Write', input: { content: 'x'.repeat(5000) } }] },
    });
    assert.ok(tool!.input!.length <= 501);
    const [text] = eventsOf(claude, {
      type: 'assistant',
      message: { content: [{ type: 'text', text: 'y'.repeat(9000) }] },
    });
    assert.ok(text!.text!.length <= 4001);
  });

  it('Codex and Gemini lines', () => {
    assert.deepEqual(
      eventsOf(codex, { type: 'item.completed', item: { type: 'reasoning', text: 'hmm' } }),
      [],
    );
    assert.deepEqual(
      eventsOf(codex, { type: 'item.completed', item: { type: 'agent_message', text: 'hello' } }),
      [{ type: 'assistant_text', text: 'hello' }],
    );
    assert.deepEqual(
      eventsOf(codex, { type: 'item.completed', item: { type: 'command_execution', command: 'ls' } }),
      [{ type: 'tool_use', tool: 'command', input: '{"command":"ls"}' }],
    );
    assert.deepEqual(
      eventsOf(codex, {
        type: 'turn.completed',
        usage: { input_tokens: 5, cached_input_tokens: 1, output_tokens: 2 },
      }),
      [{ type: 'usage', usage: { input_tokens: 5, output_tokens: 2, cache_tokens: 1 } }],
    );
    assert.deepEqual(eventsOf(gemini, { type: 'message', role: 'assistant', content: '', delta: true }), []);
    assert.deepEqual(
      eventsOf(gemini, { type: 'tool_use', tool_name: 'read_file', parameters: { path: 'x' } }),
      [{ type: 'tool_use', tool: 'read_file', input: '{"path":"x"}' }],
    );
  });

  it('context overflow only from structured codes, never from text', () => {
    assert.equal(
      isContextOverflow({ type: 'result', is_error: true, error: { code: 'context_length_exceeded' } }),
      true,
    );
    assert.equal(
      isContextOverflow({
        type: 'turn.failed',
        error: { error: { type: 'invalid_request_error', code: 'context_length_exceeded' } },
      }),
      true,
    );
    assert.equal(isContextOverflow({ type: 'result', subtype: 'model_context_window_exceeded' }), true);
    assert.equal(
      contextOverflowCode({ type: 'result', subtype: 'model_context_window_exceeded' }),
      'model_context_window_exceeded',
    );
    // The words in free text are not a signal.
    assert.equal(
      isContextOverflow({
        type: 'result',
        is_error: true,
        result: 'context_length_exceeded: prompt is too long',
      }),
      false,
    );
    assert.equal(
      isContextOverflow({
        type: 'assistant',
        message: { content: [{ type: 'text', text: 'context_length_exceeded' }] },
      }),
      false,
    );
    assert.equal(
      isContextOverflow({ type: 'result', is_error: true, error: { code: 'rate_limit_exceeded' } }),
      false,
    );
  });

  it('final text: a successful result or an agent message', () => {
    assert.equal(finalTextOf({ type: 'result', is_error: false, result: 'summary' }), 'summary');
    assert.equal(finalTextOf({ type: 'result', is_error: true, result: 'err' }), undefined);
    assert.equal(finalTextOf({ type: 'item.completed', item: { type: 'agent_message', text: 'hi' } }), 'hi');
  });
});

describe('autonomous runner: outcome', () => {
  const ok: AttemptFacts = {
    stoppedFor: null,
    exitCode: 0,
    signal: null,
    turnEnded: true,
    contextOverflow: false,
    producedOutput: true,
  };
  it('classifies in order: stop reasons, overflow, failure, empty, ok', () => {
    assert.equal(classifyAttempt(ok), 'ok');
    assert.equal(classifyAttempt({ ...ok, producedOutput: false }), 'empty_output');
    assert.equal(classifyAttempt({ ...ok, exitCode: 2 }), 'runner_failure');
    assert.equal(classifyAttempt({ ...ok, turnEnded: false }), 'runner_failure');
    assert.equal(classifyAttempt({ ...ok, turnError: 'x' }), 'runner_failure');
    assert.equal(classifyAttempt({ ...ok, spawnError: 'ENOENT' }), 'runner_failure');
    assert.equal(
      classifyAttempt({ ...ok, exitCode: 1, contextOverflow: true, producedOutput: false }),
      'context_overflow',
    );
    assert.equal(
      classifyAttempt({
        ...ok,
        exitCode: null,
        signal: 'SIGTERM',
        stoppedFor: 'timeout',
        contextOverflow: true,
      }),
      'timeout',
    );
    assert.equal(
      classifyAttempt({ ...ok, exitCode: null, signal: 'SIGTERM', stoppedFor: 'cancelled' }),
      'cancelled',
    );
  });
  it('envelopes: none for ok, a code for overflow, the stderr tail for failures', () => {
    assert.equal(errorEnvelope('ok', ok), undefined);
    assert.equal(
      errorEnvelope('context_overflow', { ...ok, contextOverflow: true })?.code,
      'context_length_exceeded',
    );
    const failure = errorEnvelope('runner_failure', { ...ok, exitCode: 3, stderrTail: 'trace' });
    assert.equal(failure?.stderr, 'trace');
    assert.match(failure!.message, /exited with 3/);
  });
});

describe('autonomous runner: compact prompt', () => {
  it('is self-contained and bounded', () => {
    const short = buildCompactPrompt('do the thing');
    assert.ok(short.endsWith('do the thing'));
    assert.match(short, /self-contained/);
    const long = buildCompactPrompt(`HEAD${'x'.repeat(100_000)}TAIL`, 2000);
    assert.ok(long.length <= 2000);
    assert.ok(long.includes('HEAD') && long.endsWith('TAIL'));
  });
});

describe('autonomous activity bus', () => {
  it('delivers per workflow, bounds subscribers, survives a throwing listener', () => {
    const bus = new ActivityBus(2);
    const seen: AutonomousActivityEvent[] = [];
    const off = bus.subscribe('w1', (e) => seen.push(e));
    bus.subscribe('w1', () => {
      throw new Error('broken');
    });
    assert.throws(() => bus.subscribe('w1', () => {}), TooManyActivityListeners);
    bus.subscribe('w2', () => {}); // another workflow has its own bound
    const event = { workflowId: 'w1', line: 'main', type: 'system' as const, at: 'now' };
    bus.publish(event);
    bus.publish({ ...event, workflowId: 'w2' });
    assert.deepEqual(seen, [event]);
    off();
    off();
    assert.equal(bus.listenerCount('w1'), 1);
  });
});

describe('autonomous runner: line CLI home', () => {
  it('one 0700 directory per workflow and line, names made safe', () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'svc-home-'));
    const { home, env } = prepareLineHome(
      dataDir,
      'wf-1',
      'main',
      claude,
      'http://127.0.0.1:1/api/remote/llm-proxy',
    );
    assert.equal(home, path.join(dataDir, 'autonomous', 'cli-homes', 'wf-1', 'main'));
    assert.equal(statSync(home).mode & 0o777, 0o700);
    assert.deepEqual(env, {});
    const odd = lineHomePath(dataDir, '../../etc', 'main');
    assert.ok(odd.startsWith(path.join(dataDir, 'autonomous', 'cli-homes')), odd);
    const codexHome = prepareLineHome(
      dataDir,
      'wf-1',
      'review',
      codex,
      'http://127.0.0.1:1/api/remote/llm-proxy',
    );
    assert.ok(codexHome.env.CODEX_HOME?.startsWith(codexHome.home));
  });
});

describe('autonomous runner: settings', () => {
  const base = { SVC_DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'svc-settings-')) };
  it('proxy base URL: autonomous.proxy_base_url, else SVC_PUBLIC_URL, else http://HOST:PORT', () => {
    assert.equal(
      autonomousProxyBaseUrl(
        loadSettings({ ...base, SVC_AUTONOMOUS__PROXY_BASE_URL: 'http://10.0.0.5:8080/' }),
      ),
      'http://10.0.0.5:8080/api/remote/llm-proxy',
    );
    assert.equal(
      autonomousProxyBaseUrl(loadSettings({ ...base, SVC_PUBLIC_URL: 'https://svc.example.test' })),
      'https://svc.example.test/api/remote/llm-proxy',
    );
    assert.equal(
      autonomousProxyBaseUrl(loadSettings({ ...base, HOST: '0.0.0.0', PORT: '9000' })),
      'http://127.0.0.1:9000/api/remote/llm-proxy',
    );
    assert.equal(
      autonomousProxyBaseUrl(loadSettings({ ...base, HOST: '::1', PORT: '9000' })),
      'http://[::1]:9000/api/remote/llm-proxy',
    );
    assert.throws(() => loadSettings({ ...base, SVC_AUTONOMOUS__PROXY_BASE_URL: 'file:///etc/passwd' }));
  });
  it('executables: autonomous.cli_paths (JSON in the environment), else the adapter name on PATH', () => {
    const s = loadSettings({ ...base, SVC_AUTONOMOUS__CLI_PATHS: '{"cli_beta": "/opt/claude"}' });
    assert.equal(autonomousExecutable(s, claude), '/opt/claude');
    assert.equal(autonomousExecutable(s, codex), 'codex');
    assert.equal(autonomousExecutable(s, getAdapter('custom_tool')), null);
  });
});
