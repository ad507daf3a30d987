// The runner classifies a CLI failure from the provider error the model proxy relayed for the line's
// session (agent_sessions.last_provider_error, domain/proxy/provider-errors.ts), when the CLI itself
// prints nothing structured: Anthropic's "prompt is too long" 400 becomes a context overflow (retried
// once on the same line with a fresh conversation), an exhausted credit a hard-quota envelope. Real
// components: the API's proxy and database (SQLite, or PostgreSQL with DATABASE_URL), the mock
// provider behind the tenant's stored key, the scripted fake CLI in its own process.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { sessionLinesRepository } from '../../../db/repositories/autonomous/session-lines.ts';
import { classifyRunnerError, decideAfterError } from '../../../domain/autonomous/errors.ts';
import {
  autonomousProxyBaseUrl,
  cliRunner,
  type RunCliInput,
} from '../../../services/autonomous/runner/run-cli.ts';
import { sessionLines } from '../../../services/autonomous/session-lines.ts';
import { ANTHROPIC_CREDIT_TOO_LOW, ANTHROPIC_PROMPT_TOO_LONG } from '../../fixtures/mock-provider.ts';
import { newWorkflow, type RunnerWorld, startRunnerWorld, writeScript } from './runner-support.ts';

const TOO_LONG = 'MARK-PROMPT-TOO-LONG';
const NO_CREDIT = 'MARK-CREDIT-TOO-LOW';

let world: RunnerWorld;
let runner: ReturnType<typeof cliRunner>;

before(async () => {
  world = await startRunnerWorld();
  world.mock.setBehaviour({
    markedErrors: { [TOO_LONG]: ANTHROPIC_PROMPT_TOO_LONG, [NO_CREDIT]: ANTHROPIC_CREDIT_TOO_LOW },
  });
  runner = cliRunner(
    { database: world.app.database, settings: world.app.settings, now: () => new Date() },
    { pollMs: 150, heartbeatMs: 100, graceMs: 1000 },
  );
});
after(async () => {
  await world?.close();
});

const input = (workflowId: string, worktree: string, extra: Partial<RunCliInput> = {}): RunCliInput => ({
  workflowId,
  line: 'main',
  prompt: 'implement the requirement',
  worktreePath: worktree,
  cliTool: 'cli_beta',
  ...extra,
});

async function sessionFact(sessionId: string) {
  const { db, t } = world.app.database;
  const [row] = await db
    .select({ cls: t.agentSessions.lastProviderError, at: t.agentSessions.lastProviderErrorAt })
    .from(t.agentSessions)
    .where(eq(t.agentSessions.sessionId, sessionId));
  return row;
}

function deps() {
  return { database: world.app.database, settings: world.app.settings, now: () => new Date() };
}

describe('runner: provider errors seen by the proxy', () => {
  test('the proxy relays the provider error body byte for byte and records its class on the session only', async () => {
    const { workflowId } = await newWorkflow(world);
    const lines = sessionLines(deps());
    const state = await lines.openLine(workflowId, 'main', 'cli_beta', null);
    const other = await lines.openLine(workflowId, 'test', 'cli_beta', null);
    const { token } = await lines.issueToken(state, 'cli_beta');
    const call = (content: string) =>
      fetch(`${autonomousProxyBaseUrl(world.app.settings)}/v1/messages`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-key': token,
          'anthropic-version': '2023-06-01',
        },
        body: JSON.stringify({ model: 'm', max_tokens: 8, messages: [{ role: 'user', content }] }),
      });

    const ok = await call('hello');
    assert.equal(ok.status, 200);
    await ok.arrayBuffer();
    assert.equal((await sessionFact(state.sessionId))?.cls ?? null, null, 'a success records nothing');

    const res = await call(`${TOO_LONG} please`);
    assert.equal(res.status, 400);
    const bytes = Buffer.from(await res.arrayBuffer());
    assert.ok(bytes.equals(Buffer.from(ANTHROPIC_PROMPT_TOO_LONG.body)), bytes.toString('utf8'));
    let fact = await sessionFact(state.sessionId);
    for (let i = 0; i < 40 && fact?.cls == null; i++) {
      await new Promise((r) => setTimeout(r, 25));
      fact = await sessionFact(state.sessionId);
    }
    assert.equal(fact?.cls, 'context_overflow');
    assert.ok(fact?.at instanceof Date && Math.abs(fact.at.getTime() - Date.now()) < 60_000);
    assert.equal(
      (await sessionFact(other.sessionId))?.cls ?? null,
      null,
      "another line's session is untouched",
    );

    // A later success does not erase it (only errors write), a later error replaces it.
    const again = await call('hello again');
    assert.equal(again.status, 200);
    await again.arrayBuffer();
    assert.equal((await sessionFact(state.sessionId))?.cls, 'context_overflow');
    const credit = await call(NO_CREDIT);
    assert.equal(credit.status, 400);
    assert.equal(await credit.text(), ANTHROPIC_CREDIT_TOO_LOW.body);
    fact = await sessionFact(state.sessionId);
    for (let i = 0; i < 40 && fact?.cls !== 'hard_quota'; i++) {
      await new Promise((r) => setTimeout(r, 25));
      fact = await sessionFact(state.sessionId);
    }
    assert.equal(fact?.cls, 'hard_quota');

    // Without a valid token nothing is forwarded, nothing recorded.
    const before = world.mock.requests.length;
    const anon = await fetch(`${autonomousProxyBaseUrl(world.app.settings)}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'not-a-token' },
      body: JSON.stringify({ messages: [{ role: 'user', content: TOO_LONG }] }),
    });
    assert.equal(anon.status, 401);
    await anon.arrayBuffer();
    assert.equal(world.mock.requests.length, before);
  });

  test("Anthropic's over-long prompt with a plain CLI exit is a context overflow, retried fresh on the same line", async () => {
    const { workflowId, worktree } = await newWorkflow(world);
    writeScript(worktree, {
      steps: [{ call: 1 }, { write: { path: 'fresh.txt', content: 'fresh' } }],
      whenResumed: [{ callOrDie: TOO_LONG }],
    });
    const first = await runner.run(input(workflowId, worktree));
    assert.equal(first.outcome, 'ok', JSON.stringify(first));
    const second = await runner.run(
      input(workflowId, worktree, { usageCursor: first.usageCursor, compactPrompt: 'compact: continue' }),
    );
    assert.equal(second.outcome, 'ok', JSON.stringify(second));
    assert.equal(second.attempts.length, 2);
    const [failed, retried] = second.attempts;
    assert.equal(failed!.outcome, 'context_overflow', JSON.stringify(failed));
    assert.equal(failed!.exitCode, 1, 'the CLI failed with a plain non-zero exit');
    assert.equal(failed!.resumed, true);
    assert.equal(failed!.errorEnvelope?.code, 'context_length_exceeded');
    assert.equal(failed!.errorEnvelope?.providerError, 'context_overflow');
    assert.equal(failed!.usage.requests, 0, 'the refused call is not counted');
    assert.equal(retried!.outcome, 'ok');
    assert.equal(retried!.resumed, false);
    assert.notEqual(second.providerSessionId, first.providerSessionId);
    const line = await sessionLinesRepository(world.app.database).find(workflowId, 'main');
    assert.equal(
      line?.providerSessionId,
      second.providerSessionId,
      'the fresh conversation is bound to the same line',
    );
    assert.ok(!JSON.stringify(second).includes('real-anthropic-key'), 'no key in the result');
  });

  test('an exhausted credit gives a structured hard-quota envelope the workflow pauses on', async () => {
    const { workflowId, worktree } = await newWorkflow(world);
    writeScript(worktree, { steps: [{ callOrDie: NO_CREDIT }] });
    const result = await runner.run(input(workflowId, worktree));
    assert.equal(result.outcome, 'runner_failure', JSON.stringify(result));
    assert.equal(result.attempts.length, 1, 'no overflow retry');
    assert.equal(result.errorEnvelope?.code, 'insufficient_quota');
    assert.equal(result.errorEnvelope?.providerError, 'hard_quota');
    const cls = classifyRunnerError({
      outcome: result.outcome,
      exitCode: result.exitCode,
      envelope: { code: result.errorEnvelope?.code ?? null },
    });
    assert.deepEqual(cls, { class: 'hard_quota' });
    const decision = decideAfterError(cls!, { failures: 1, elapsedSeconds: 0 });
    assert.equal(decision.kind, 'transition');
    assert.deepEqual(decision.kind === 'transition' && decision.trigger, { type: 'hard_quota_error' });
  });

  test("an earlier attempt's provider error does not classify a later plain failure", async () => {
    const { workflowId, worktree } = await newWorkflow(world);
    const state = await sessionLines(deps()).openLine(workflowId, 'main', 'cli_beta', null);
    const { db, t } = world.app.database;
    await db
      .update(t.agentSessions)
      .set({ lastProviderError: 'context_overflow', lastProviderErrorAt: new Date() })
      .where(eq(t.agentSessions.sessionId, state.sessionId));
    writeScript(worktree, { steps: [{ fail: 3 }] });
    const result = await runner.run(input(workflowId, worktree));
    assert.equal(result.outcome, 'runner_failure');
    assert.equal(result.attempts.length, 1);
    assert.equal(result.errorEnvelope?.providerError, undefined);
    assert.equal(result.errorEnvelope?.code, undefined);
  });

  test('a provider error of another class leaves a plain failure a runner failure, with the class recorded', async () => {
    const { workflowId, worktree } = await newWorkflow(world);
    world.mock.setBehaviour({ errorStatus: 529 });
    try {
      writeScript(worktree, { steps: [{ callOrDie: 'anything' }] });
      const result = await runner.run(input(workflowId, worktree));
      assert.equal(result.outcome, 'runner_failure');
      assert.equal(result.attempts.length, 1);
      assert.equal(result.errorEnvelope?.providerError, 'overloaded');
      assert.equal(result.errorEnvelope?.code, 'overloaded_error');
    } finally {
      world.mock.setBehaviour({ errorStatus: undefined });
    }
  });
});
