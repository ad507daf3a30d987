import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import {
  buildCliEnv,
  GEMINI_DEFAULT_MODEL,
  getAdapter,
  isValidCliToolName,
  resolveExecutable,
} from '../../agent/adapters.ts';
import { CLI_PACKAGES } from '../../agent/cli-packages.ts';
import { providerForCliTool } from '../../domain/remote-cli-tools.ts';

describe('agent CLI adapters', () => {
  it('cli_alpha: Qwen Code, stream-json in and out (its --print equivalent), OpenAI variables', () => {
    const a = getAdapter('cli_alpha');
    assert.equal(a.executable, 'qwen');
    assert.equal(a.npmPackage, '@qwen-code/qwen-code');
    assert.equal(a.mode, 'stream');
    const args = a.startArgs('gpt-x');
    assert.deepEqual(args.slice(0, 4), ['--input-format', 'stream-json', '--output-format', 'stream-json']);
    assert.ok(!args.includes('--print'), 'Qwen Code rejects --print');
    assert.deepEqual(args.slice(args.indexOf('--auth-type'), args.indexOf('--auth-type') + 2), [
      '--auth-type',
      'openai',
    ]);
    assert.deepEqual(args.slice(-2), ['--model', 'gpt-x']);
    assert.ok(!a.startArgs().includes('--model'), 'no --model without a model');
    const resume = a.resumeArgs('conv-1', 'gpt-y');
    assert.equal(resume[resume.indexOf('--resume') + 1], 'conv-1');
    assert.deepEqual(resume.slice(-2), ['--model', 'gpt-y']);
    assert.equal(a.keyVar, 'OPENAI_API_KEY');
    assert.equal(a.baseUrlVar, 'OPENAI_BASE_URL');
    assert.equal(a.extraEnv.QWEN_TELEMETRY_ENABLED, 'false');
    assert.equal(a.extraEnv.QWEN_USAGE_STATISTICS_ENABLED, 'false');
    // Usage: Qwen's input_tokens include the cached ones; counted once.
    assert.deepEqual(
      a.inspect({
        type: 'result',
        subtype: 'success',
        is_error: false,
        usage: { input_tokens: 22, output_tokens: 14, cache_read_input_tokens: 6, total_tokens: 36 },
      }),
      { turnEnded: true, usage: { input_tokens: 16, output_tokens: 14, cache_tokens: 6 } },
    );
  });

  it('cli_alpha writes a per-session QWEN_HOME with telemetry, statistics and updates off, no secret', () => {
    const a = getAdapter('cli_alpha');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-qwen-home-'));
    const env = a.prepareSessionDir!(dir, 'http://127.0.0.1:1/api/remote/llm-proxy');
    assert.deepEqual(env, { QWEN_HOME: path.join(dir, 'qwen') });
    const file = path.join(dir, 'qwen', 'settings.json');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const settings = JSON.parse(readFileSync(file, 'utf8'));
    assert.equal(settings.privacy.usageStatisticsEnabled, false);
    assert.equal(settings.telemetry.enabled, false);
    assert.equal(settings.general.enableAutoUpdate, false);
    assert.doesNotMatch(readFileSync(file, 'utf8'), /svcpt_|llm-proxy|api_?key/i);
  });

  it('cli_delta: Gemini CLI, one process per turn, Gemini variables, explicit default model', () => {
    const d = getAdapter('cli_delta');
    assert.equal(d.executable, 'gemini');
    assert.equal(d.npmPackage, '@google/gemini-cli');
    assert.equal(d.mode, 'per_turn');
    assert.equal(d.keyVar, 'GEMINI_API_KEY');
    assert.equal(d.baseUrlVar, 'GOOGLE_GEMINI_BASE_URL');
    assert.equal(d.extraEnv.GEMINI_CLI_TRUST_WORKSPACE, 'true');
    assert.equal(d.extraEnv.GEMINI_TELEMETRY_ENABLED, 'false');
    const args = d.startArgs();
    assert.deepEqual(args.slice(0, 2), ['--output-format', 'stream-json']);
    assert.deepEqual(args.slice(-2), ['--model', GEMINI_DEFAULT_MODEL]);
    assert.deepEqual(d.startArgs('gemini-x').slice(-2), ['--model', 'gemini-x']);
    assert.deepEqual(d.resumeArgs('s-1', 'gemini-y').slice(-4), ['--model', 'gemini-y', '--resume', 's-1']);
    assert.equal(d.formatInput('hello'), 'hello', 'the prompt is the whole stdin');
    assert.equal(d.formatPermissionResponse('r', 'allow', {}), '');
    assert.deepEqual(d.inspect({ type: 'init', session_id: 'g-1', model: 'm' }), { conversationId: 'g-1' });
    assert.deepEqual(d.inspect({ type: 'message', role: 'assistant', content: 'hi', delta: true }), {});
    assert.deepEqual(
      d.inspect({
        type: 'result',
        status: 'success',
        stats: { input_tokens: 15, output_tokens: 10, cached: 5, input: 10, models: { 'gemini-x': {} } },
      }),
      { turnEnded: true, usage: { input_tokens: 10, output_tokens: 10, cache_tokens: 5, model: 'gemini-x' } },
    );
    const failed = d.inspect({
      type: 'result',
      status: 'error',
      error: { type: 'unknown', message: '[API Error: fetch failed]' },
      stats: { input_tokens: 0, output_tokens: 0 },
    });
    assert.deepEqual(failed, { turnEnded: true, turnError: '[API Error: fetch failed]' });
    assert.deepEqual(d.inspect({ type: 'error', message: 'retrying' }), { noProgress: true });
  });

  it('cli_delta writes a per-session GEMINI_CLI_HOME selecting API-key auth, everything else off', () => {
    const d = getAdapter('cli_delta');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-gemini-home-'));
    const env = d.prepareSessionDir!(dir, 'http://127.0.0.1:1/api/remote/llm-proxy');
    assert.deepEqual(env, { GEMINI_CLI_HOME: path.join(dir, 'gemini') });
    const file = path.join(dir, 'gemini', '.gemini', 'settings.json');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(statSync(path.dirname(file)).mode & 0o777, 0o700);
    const settings = JSON.parse(readFileSync(file, 'utf8'));
    assert.equal(settings.security.auth.selectedType, 'gemini-api-key');
    assert.equal(settings.privacy.usageStatisticsEnabled, false);
    assert.equal(settings.telemetry.enabled, false);
    assert.equal(settings.general.enableAutoUpdate, false);
    assert.equal(settings.general.enableAutoUpdateNotification, false);
    assert.ok(settings.general.maxAttempts >= 1 && settings.general.maxAttempts <= 3);
    assert.doesNotMatch(readFileSync(file, 'utf8'), /svcpt_|llm-proxy/);
  });

  it('every pinned CLI package has an adapter with the same executable and package', () => {
    for (const [id, pkg] of Object.entries(CLI_PACKAGES)) {
      const adapter = getAdapter(id);
      assert.equal(adapter.executable, pkg.bin, id);
      assert.equal(adapter.npmPackage, pkg.name, id);
    }
  });

  it('the server issues each tool its provider key: cli_delta uses the gemini key', () => {
    const providers = Object.fromEntries(Object.keys(CLI_PACKAGES).map((id) => [id, providerForCliTool(id)]));
    assert.deepEqual(providers, {
      cli_alpha: 'openai',
      cli_beta: 'anthropic',
      cli_gamma: 'openai',
      cli_delta: 'gemini',
    });
    for (const id of Object.keys(CLI_PACKAGES)) {
      const vars = { openai: 'OPENAI_API_KEY', anthropic: 'ANTHROPIC_API_KEY', gemini: 'GEMINI_API_KEY' };
      assert.equal(
        getAdapter(id).keyVar,
        vars[providerForCliTool(id)],
        `${id}: key variable matches the provider`,
      );
    }
    assert.equal(providerForCliTool('my_cli'), 'openai', 'the generic adapter uses the OpenAI variables');
  });

  it('cli_beta: Claude Code on Anthropic variables', () => {
    const b = getAdapter('cli_beta');
    assert.equal(b.executable, 'claude');
    assert.equal(b.npmPackage, '@anthropic-ai/claude-code');
    assert.deepEqual(b.startArgs().slice(0, 3), ['--print', '--output-format', 'stream-json']);
    assert.equal(b.keyVar, 'ANTHROPIC_API_KEY');
    assert.equal(b.baseUrlVar, 'ANTHROPIC_BASE_URL');
  });

  it('cli_gamma: Codex exec --json, one process per turn, prompt on stdin', () => {
    const g = getAdapter('cli_gamma');
    assert.equal(g.executable, 'codex');
    assert.equal(g.mode, 'per_turn');
    const args = g.startArgs('o4');
    assert.deepEqual(args.slice(0, 2), ['exec', '--json']);
    assert.equal(args.at(-1), '-');
    assert.ok(args.includes('--model') && args.includes('o4'));
    assert.deepEqual(g.resumeArgs('th-1').slice(-3), ['resume', 'th-1', '-']);
    assert.equal(g.keyVar, 'OPENAI_API_KEY');
    assert.equal(g.formatInput('hello'), 'hello');
    assert.deepEqual(g.inspect({ type: 'thread.started', thread_id: 'th-9' }), { conversationId: 'th-9' });
    assert.deepEqual(g.inspect({ type: 'turn.completed' }), { turnEnded: true });
  });

  it('unknown tools get the generic adapter: spec args only, OpenAI variables, cli_path executable', () => {
    const x = getAdapter('my_cli');
    assert.deepEqual(x.startArgs('m'), ['--print', '--output-format', 'stream-json', '--model', 'm']);
    assert.equal(x.keyVar, 'OPENAI_API_KEY');
    assert.equal(x.baseUrlVar, 'OPENAI_BASE_URL');
    assert.equal(resolveExecutable(x, { cli_tool: 'cli_alpha', cli_path: '' }), null, 'nothing to run');
    assert.equal(resolveExecutable(x, { cli_tool: 'cli_alpha', cli_path: '/opt/my' }), '/opt/my');
  });

  it('cli_path replaces only the configured tool executable', () => {
    const cfg = { cli_tool: 'cli_alpha', cli_path: '/opt/fake' };
    assert.equal(resolveExecutable(getAdapter('cli_alpha'), cfg), '/opt/fake');
    assert.equal(resolveExecutable(getAdapter('cli_beta'), cfg), 'claude');
  });

  it('writes one stream-json user line per message and Claude-style permission answers', () => {
    const a = getAdapter('cli_alpha');
    const line = a.formatInput('multi\nline "quoted"');
    assert.ok(line.endsWith('\n'));
    assert.equal(line.split('\n').length, 2, 'exactly one line');
    assert.deepEqual(JSON.parse(line), {
      type: 'user',
      message: { role: 'user', content: 'multi\nline "quoted"' },
    });
    const allow = JSON.parse(a.formatPermissionResponse('r1', 'allow', { command: 'ls' }));
    assert.deepEqual(allow, {
      type: 'control_response',
      response: {
        subtype: 'success',
        request_id: 'r1',
        response: { behavior: 'allow', updatedInput: { command: 'ls' } },
      },
    });
    const deny = JSON.parse(a.formatPermissionResponse('r2', 'deny', {}, 'no'));
    assert.deepEqual(deny.response.response, { behavior: 'deny', message: 'no' });
  });

  it('recognises the init, result and permission lines', () => {
    const a = getAdapter('cli_beta');
    assert.deepEqual(a.inspect({ type: 'system', subtype: 'init', session_id: 's1' }), {
      conversationId: 's1',
    });
    assert.deepEqual(a.inspect({ type: 'result', subtype: 'success' }), { turnEnded: true });
    assert.deepEqual(
      a.inspect({
        type: 'control_request',
        request_id: 'q',
        request: { subtype: 'can_use_tool', input: { a: 1 } },
      }),
      { permissionRequest: { requestId: 'q', input: { a: 1 } } },
    );
    assert.deepEqual(a.inspect({ type: 'assistant' }), {});
  });

  it('builds the CLI environment from scratch: no inherited secrets', () => {
    const parent = {
      PATH: '/usr/bin',
      HOME: '/home/u',
      LANG: 'C.UTF-8',
      USER: 'u',
      SECRET: 'do-not-leak',
      OPENAI_API_KEY: 'sk-real-key',
      SVC_AGENT_TOKEN: 'agent-token',
      AWS_SECRET_ACCESS_KEY: 'x',
    };
    const env = buildCliEnv(
      getAdapter('cli_alpha'),
      parent,
      'proxy-tok',
      'http://srv/api/remote/llm-proxy',
      {},
      'linux',
    );
    assert.deepEqual(env, {
      PATH: '/usr/bin',
      HOME: '/home/u',
      LANG: 'C.UTF-8',
      USER: 'u',
      QWEN_TELEMETRY_ENABLED: 'false',
      QWEN_USAGE_STATISTICS_ENABLED: 'false',
      OPENAI_API_KEY: 'proxy-tok',
      OPENAI_BASE_URL: 'http://srv/api/remote/llm-proxy',
    });
    const beta = buildCliEnv(getAdapter('cli_beta'), parent, 't', 'u', {}, 'linux');
    assert.equal(beta.ANTHROPIC_API_KEY, 't');
    assert.equal(
      beta.OPENAI_API_KEY,
      undefined,
      'the real OpenAI key is not passed to another adapter either',
    );
  });

  it('cli_env adds variables but can never replace the proxy variables', () => {
    const env = buildCliEnv(
      getAdapter('cli_beta'),
      { PATH: '/bin' },
      'proxy-tok',
      'http://proxy',
      {
        HTTPS_PROXY: 'http://corp:3128',
        ANTHROPIC_API_KEY: 'sk-ant-real',
        ANTHROPIC_BASE_URL: 'https://api.anthropic.com',
      },
      'linux',
    );
    assert.equal(env.HTTPS_PROXY, 'http://corp:3128');
    assert.equal(env.ANTHROPIC_API_KEY, 'proxy-tok');
    assert.equal(env.ANTHROPIC_BASE_URL, 'http://proxy');
  });

  it('validates tool names', () => {
    assert.ok(isValidCliToolName('cli_alpha'));
    assert.ok(!isValidCliToolName('../../bin/sh'));
    assert.ok(!isValidCliToolName(''));
  });
});
