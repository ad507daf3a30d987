// Our own model proxy's quota refusals reach the runner's error envelope as structured facts (issue 13
// item 9; spec document 2 "Errors" 4: application quota exceeded or quota check failure -> fail-closed
// pause, auto-resume when quota returns). The proxy records its 429 quota_exceeded / 503
// quota_check_failed on the line's agent session (domain/proxy/session-call-errors.ts), the runner puts
// it in the envelope's `code`, and the workflow's classifier (domain/autonomous/errors.ts) maps that to
// app_quota. Nothing reads the CLI's text: the fake CLI prints only "model proxy answered 429" on stderr.
// Real components: the API's proxy, quota service and database (SQLite, or PostgreSQL with
// DATABASE_URL), the mock provider behind the tenant's stored key, the scripted fake CLI in its own
// process. The quota check failure is provoked for real (the quota table is renamed away for the step).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { classifyStepResult, decideAfterError } from '../../../domain/autonomous/errors.ts';
import {
  autonomousProxyBaseUrl,
  cliRunner,
  type RunCliInput,
  type RunCliResult,
} from '../../../services/autonomous/runner/run-cli.ts';
import { sessionLines } from '../../../services/autonomous/session-lines.ts';
import { ADMIN } from '../../support/harness.ts';
import { setUserQuota } from '../../support/quota.ts';
import { api, login, type Session } from '../../support/session.ts';
import {
  modelCalls,
  newWorkflow,
  type RunnerWorld,
  startRunnerWorld,
  writeScript,
} from './runner-support.ts';

let world: RunnerWorld;
let admin: Session;
let runner: ReturnType<typeof cliRunner>;

before(async () => {
  world = await startRunnerWorld();
  admin = await login(world.app.url, ADMIN.username, ADMIN.password);
  runner = cliRunner(
    { database: world.app.database, settings: world.app.settings, now: () => new Date() },
    { pollMs: 150, heartbeatMs: 100, graceMs: 1000 },
  );
});
after(async () => {
  await world?.close();
});

const deps = () => ({ database: world.app.database, settings: world.app.settings, now: () => new Date() });

const input = (workflowId: string, worktree: string, extra: Partial<RunCliInput> = {}): RunCliInput => ({
  workflowId,
  line: 'main',
  prompt: 'implement the requirement',
  worktreePath: worktree,
  cliTool: 'cli_beta',
  ...extra,
});

/** The classification exactly as the workflow calls it (workflows/autonomous/workflow.ts). */
const asWorkflowClassifies = (r: RunCliResult) => classifyStepResult(r);

async function sessionFact(sessionId: string) {
  const { db, t } = world.app.database;
  const [row] = await db
    .select({ cls: t.agentSessions.lastProviderError })
    .from(t.agentSessions)
    .where(eq(t.agentSessions.sessionId, sessionId));
  return row?.cls ?? null;
}

/** The user's daily request quota back to none (setUserQuota takes numbers only). */
async function clearUserQuota() {
  const r = await api(world.app.url, 'PUT', `/api/admin/users/${world.userId}/quota`, {
    auth: admin,
    body: { daily_request_quota: null },
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
}

function assertNoSecretsLogged() {
  const logs = world.app.logs.join('');
  assert.ok(!logs.includes('real-anthropic-key'), 'the stored key is never logged');
}

describe("runner: our own proxy's quota refusals", () => {
  test('an exhausted user quota gives a quota_exceeded envelope the workflow pauses on (app_quota), and the line runs again once quota returns', async () => {
    const { workflowId, worktree } = await newWorkflow(world);
    const lines = sessionLines(deps());
    const other = await lines.openLine(workflowId, 'test', 'cli_beta', null);
    await setUserQuota(world.app, admin, world.userId, { daily_request_quota: 1 });
    try {
      // The first call takes the day's only request; the second is refused by our proxy (429).
      writeScript(worktree, { steps: [{ call: 1 }, { callOrDie: 'one call too many' }] });
      const callsBefore = modelCalls(world.mock);
      const result = await runner.run(input(workflowId, worktree));
      assert.equal(result.outcome, 'runner_failure', JSON.stringify(result));
      assert.equal(result.attempts.length, 1, 'no overflow retry');
      assert.equal(result.exitCode, 1);
      assert.equal(modelCalls(world.mock) - callsBefore, 1, 'the refused call never reached the provider');
      assert.equal(result.usage.requests, 1, 'the answered call is metered, the refused one is not');
      assert.equal(result.errorEnvelope?.code, 'quota_exceeded', JSON.stringify(result.errorEnvelope));
      assert.equal(result.errorEnvelope?.proxyRefusal, 'quota_exceeded');
      assert.equal(result.errorEnvelope?.providerError, undefined, 'not reported as a provider error');
      assert.ok(result.errorEnvelope?.message.includes('the model proxy refused the call: quota_exceeded'));

      const cls = asWorkflowClassifies(result);
      assert.deepEqual(cls, { class: 'app_quota', reason: 'exceeded' });
      const decision = decideAfterError(cls!, { failures: 1, elapsedSeconds: 0 });
      assert.equal(decision.kind, 'transition');
      assert.deepEqual(decision.kind === 'transition' && decision.trigger, { type: 'app_quota_exceeded' });

      const main = await lines.openLine(workflowId, 'main', 'cli_beta', null);
      assert.equal(await sessionFact(main.sessionId), 'quota_exceeded');
      assert.equal(await sessionFact(other.sessionId), null, "another line's session is untouched");
    } finally {
      await clearUserQuota();
    }

    // Quota returned: the same line runs; a later plain failure is not taken for the old refusal.
    writeScript(worktree, { steps: [{ callOrDie: 'quota is back' }] });
    const again = await runner.run(input(workflowId, worktree));
    assert.equal(again.outcome, 'ok', JSON.stringify(again));
    assert.equal(again.errorEnvelope, undefined);
    assert.equal(asWorkflowClassifies(again), undefined);
    writeScript(worktree, { steps: [{ call: 1 }, { fail: 3 }] });
    const plain = await runner.run(input(workflowId, worktree, { usageCursor: again.usageCursor }));
    assert.equal(plain.outcome, 'runner_failure');
    assert.equal(plain.usage.requests, 1);
    assert.equal(plain.errorEnvelope?.code, undefined);
    assert.equal(plain.errorEnvelope?.proxyRefusal, undefined);
    assert.deepEqual(asWorkflowClassifies(plain), { class: 'runner_failure' });
    assertNoSecretsLogged();
  });

  test('a quota check that fails gives a quota_check_failed envelope (app_quota, check_failed)', async () => {
    const { workflowId, worktree } = await newWorkflow(world);
    writeScript(worktree, { steps: [{ callOrDie: 'cannot be checked' }] });
    const { sql } = world.app.database;
    const callsBefore = modelCalls(world.mock);
    await sql.query('ALTER TABLE tenant_usage RENAME TO tenant_usage_away');
    let result: RunCliResult;
    try {
      result = await runner.run(input(workflowId, worktree));
    } finally {
      await sql.query('ALTER TABLE tenant_usage_away RENAME TO tenant_usage');
    }
    assert.equal(result.outcome, 'runner_failure', JSON.stringify(result));
    assert.equal(modelCalls(world.mock), callsBefore, 'fail closed: nothing reached the provider');
    assert.equal(result.errorEnvelope?.code, 'quota_check_failed', JSON.stringify(result.errorEnvelope));
    assert.equal(result.errorEnvelope?.proxyRefusal, 'quota_check_failed');
    assert.deepEqual(asWorkflowClassifies(result), { class: 'app_quota', reason: 'check_failed' });
    const decision = decideAfterError(asWorkflowClassifies(result)!, { failures: 1, elapsedSeconds: 0 });
    assert.deepEqual(decision.kind === 'transition' && decision.trigger, { type: 'app_quota_exceeded' });

    // The check works again: the same step goes through.
    const again = await runner.run(input(workflowId, worktree, { usageCursor: result.usageCursor }));
    assert.equal(again.outcome, 'ok', JSON.stringify(again));
    assert.equal(again.usage.requests, 1);
    assertNoSecretsLogged();
  });

  test('only a token that passed every check records a refusal, and only on its own session', async () => {
    const { workflowId } = await newWorkflow(world);
    const lines = sessionLines(deps());
    const main = await lines.openLine(workflowId, 'main', 'cli_beta', null);
    const other = await lines.openLine(workflowId, 'review', 'cli_beta', null);
    const call = (token: string) =>
      fetch(`${autonomousProxyBaseUrl(world.app.settings)}/v1/messages`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-key': token,
          'anthropic-version': '2023-06-01',
        },
        body: JSON.stringify({ model: 'm', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
      });
    const { token: revoked } = await lines.issueToken(main, 'cli_beta');
    await lines.revokeTokens(main.sessionId);
    await setUserQuota(world.app, admin, world.userId, { daily_request_quota: 0 });
    try {
      // A revoked token of an over-quota user: refused as a token (401), nothing recorded.
      const r1 = await call(revoked);
      assert.equal(r1.status, 401);
      assert.equal(((await r1.json()) as { error: { type: string } }).error.type, 'proxy_auth_error');
      // A token that is not ours at all: nothing recorded anywhere.
      const r2 = await call(`${revoked.slice(0, -4)}AAAA`);
      assert.equal(r2.status, 401);
      await r2.arrayBuffer();
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(await sessionFact(main.sessionId), null, 'a refused token records nothing');

      // The other line's valid token: refused for quota (429), recorded on that line only.
      const { token: valid } = await lines.issueToken(other, 'cli_beta');
      const r3 = await call(valid);
      assert.equal(r3.status, 429);
      assert.equal(r3.headers.get('x-should-retry'), 'false');
      assert.equal(((await r3.json()) as { error: { type: string } }).error.type, 'quota_exceeded');
      let fact = await sessionFact(other.sessionId);
      for (let i = 0; i < 40 && fact === null; i++) {
        await new Promise((r) => setTimeout(r, 25));
        fact = await sessionFact(other.sessionId);
      }
      assert.equal(fact, 'quota_exceeded');
      assert.equal(await sessionFact(main.sessionId), null);
      await lines.revokeTokens(other.sessionId);
    } finally {
      await clearUserQuota();
    }
  });
});
