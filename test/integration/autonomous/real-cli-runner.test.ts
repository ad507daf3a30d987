// One autonomous step with each real CLI CI installs (issue 25: "the real CLIs run a session and an
// autonomous step inside the sandbox end to end"): the runner starts Qwen Code, Claude Code, Codex and
// Gemini CLI in the sandbox (the default) in a worktree, each reaches the mock provider only through
// the model-proxy gate, and the step ends `ok` with its call metered. A CLI that is not installed
// (`npm run clis:install`) skips with the reason.
// store-independent: each real CLI in the sandbox for one step; step rows are covered on both stores by
//   workflow-e2e
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { cliRunner } from '../../../services/autonomous/runner/run-cli.ts';
import { ADMIN } from '../../support/harness.ts';
import { realCli } from '../../support/real-clis.ts';
import { api, login } from '../../support/session.ts';
import { newWorkflow, type RunnerWorld, startRunnerWorld } from './runner-support.ts';

const TOOLS = [
  { id: 'cli_alpha', name: 'Qwen Code', model: 'gpt-mock-1' },
  { id: 'cli_beta', name: 'Claude Code', model: 'claude-mock-1' },
  { id: 'cli_gamma', name: 'Codex', model: 'mock-model' },
  { id: 'cli_delta', name: 'Gemini CLI', model: 'gemini-mock-1' },
];

let world: RunnerWorld;
let runner: ReturnType<typeof cliRunner>;

before(async () => {
  world = await startRunnerWorld();
  const admin = await login(world.app.url, ADMIN.username, ADMIN.password);
  // The world holds an Anthropic key; the other providers' keys point at the same mock.
  for (const [provider, base] of [
    ['openai', `${world.mock.url}/v1`],
    ['gemini', world.mock.url],
  ] as const) {
    const r = await api(world.app.url, 'POST', '/api/remote/api-keys', {
      auth: admin,
      body: {
        provider,
        key_name: `${provider} runner key`,
        api_key: `real-${provider}-key-0123456789`,
        base_url: base,
        tenant_id: world.tenantId,
      },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  }
  runner = cliRunner(
    { database: world.app.database, settings: world.app.settings, now: () => new Date() },
    { pollMs: 200, heartbeatMs: 500, graceMs: 2000 },
  );
});
after(async () => {
  await world?.close();
});

describe('an autonomous step with each real CLI, in the sandbox', () => {
  for (const tool of TOOLS) {
    const cli = realCli(tool.id);
    test(`${tool.name} (${tool.id})`, { skip: 'skip' in cli ? cli.skip : false }, async () => {
      world.app.settings.autonomous.cli_paths = { [tool.id]: (cli as { path: string }).path };
      const { workflowId, worktree } = await newWorkflow(world);
      const calls = world.mock.requests.length;
      const result = await runner.run({
        workflowId,
        line: 'main',
        prompt: 'Reply with one short sentence.',
        worktreePath: worktree,
        cliTool: tool.id,
        model: tool.model,
        timeoutSeconds: 120,
      });
      assert.equal(result.outcome, 'ok', JSON.stringify(result.errorEnvelope ?? result));
      assert.ok(world.mock.requests.length > calls, 'the CLI reached the provider through the proxy');
      assert.ok(result.usage.requests >= 1, JSON.stringify(result.usage));
    });
  }
});
