import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildCliEnv, getAdapter, isValidCliToolName, resolveExecutable } from '../../agent/adapters.ts';

describe('agent CLI adapters', () => {
  it('cli_alpha: spec start args + stream-json input flags, OpenAI variables, OpenClaude', () => {
    const a = getAdapter('cli_alpha');
    assert.equal(a.executable, 'openclaude');
    assert.equal(a.npmPackage, '@gitlawb/openclaude');
    assert.equal(a.mode, 'stream');
    const args = a.startArgs('gpt-x');
    assert.deepEqual(args.slice(0, 3), ['--print', '--output-format', 'stream-json']);
    assert.deepEqual(args.slice(-2), ['--model', 'gpt-x']);
    assert.ok(args.includes('--input-format') && args.includes('--verbose'));
    assert.ok(!a.startArgs().includes('--model'), 'no --model without a model');
    const resume = a.resumeArgs('conv-1', 'gpt-y');
    assert.equal(resume[resume.indexOf('--resume') + 1], 'conv-1');
    assert.deepEqual(resume.slice(-2), ['--model', 'gpt-y']);
    assert.equal(a.keyVar, 'OPENAI_API_KEY');
    assert.equal(a.baseUrlVar, 'OPENAI_BASE_URL');
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
      CLAUDE_CODE_USE_OPENAI: '1',
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
