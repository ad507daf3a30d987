// The autonomous CLI runner end to end with real components: the API's model proxy and database
// (SQLite, or PostgreSQL with DATABASE_URL), the mock provider behind a stored key, real processes
// (the scripted fake CLI in its own process group), real git worktrees.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { and, eq } from 'drizzle-orm';
import { sessionLinesRepository } from '../../../db/repositories/autonomous/session-lines.ts';
import { type AutonomousActivityEvent, activityBusFor } from '../../../services/autonomous/activity-bus.ts';
import { lineUsage } from '../../../services/autonomous/line-usage.ts';
import { lineHomePath } from '../../../services/autonomous/runner/cli-home.ts';
import { recordGroup } from '../../../services/autonomous/runner/leftover.ts';
import { cliRunner, type RunCliInput } from '../../../services/autonomous/runner/run-cli.ts';
import { sessionLines } from '../../../services/autonomous/session-lines.ts';
import { MOCK_EXPECTED_USAGE } from '../../fixtures/mock-provider.ts';
import {
  FAKE_CLI,
  modelCalls,
  newWorkflow,
  processState,
  type RunnerWorld,
  sandboxPid,
  setStatus,
  startRunnerWorld,
  waitForFile,
  waitGone,
  writeScript,
} from './runner-support.ts';

let world: RunnerWorld;
let runner: ReturnType<typeof cliRunner>;
const heartbeats: unknown[] = [];
const PER_CALL = MOCK_EXPECTED_USAGE['anthropic-messages'];

before(async () => {
  world = await startRunnerWorld();
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
const run = (i: RunCliInput, signal?: AbortSignal) =>
  runner.run(i, { signal, heartbeat: (d) => heartbeats.push(d) });

function collect(workflowId: string) {
  const events: AutonomousActivityEvent[] = [];
  const off = activityBusFor(world.app.database).subscribe(workflowId, (e) => events.push(e));
  return { events, off };
}

describe('autonomous runner', () => {
  test('a run edits files in the worktree, commits nothing, and its usage is exactly what the provider counted', async () => {
    const { workflowId, worktree } = await newWorkflow(world);
    writeScript(worktree, {
      steps: [
        { write: { path: 'src/feature.txt', content: 'feature\n' } },
        { thinking: 'private reasoning' },
        { text: '' },
        { call: 3 },
        { append: { path: 'README.md', content: 'more\n' } },
        { retry: 1 },
      ],
      final: 'implemented the feature',
    });
    const { events, off } = collect(workflowId);
    const callsBefore = modelCalls(world.mock);
    const result = await run(input(workflowId, worktree));
    off();
    assert.equal(result.outcome, 'ok', JSON.stringify(result));
    assert.equal(result.exitCode, 0);
    assert.equal(result.finalText, 'implemented the feature');
    assert.equal(readFileSync(path.join(worktree, 'src/feature.txt'), 'utf8'), 'feature\n');
    assert.equal(readFileSync(path.join(worktree, 'README.md'), 'utf8'), '# project\nmore\n');
    // Nothing committed: the repository still has no commit at all.
    assert.throws(() => execFileSync('git', ['-C', worktree, 'rev-parse', 'HEAD'], { stdio: 'pipe' }));

    const calls = modelCalls(world.mock) - callsBefore;
    assert.equal(calls, 3);
    assert.deepEqual(result.usage, {
      total: calls * PER_CALL.totalTokens,
      input: calls * PER_CALL.inputTokens,
      output: calls * PER_CALL.outputTokens,
      requests: calls,
    });
    assert.equal(result.attempts.length, 1);

    // The line: an autonomous agent session of the owner, metered rows under its id.
    const { db, t } = world.app.database;
    const line = await sessionLinesRepository(world.app.database).find(workflowId, 'main');
    assert.ok(line);
    assert.equal(line.providerSessionId, result.providerSessionId);
    const [session] = await db
      .select()
      .from(t.agentSessions)
      .where(eq(t.agentSessions.sessionId, line.sessionId));
    assert.equal(session?.sessionType, 'autonomous');
    assert.equal(session?.workspaceType, 'autonomous');
    assert.equal(session?.status, 'active');
    assert.equal(session?.userId, world.userId);
    assert.equal(session?.tenantId, world.tenantId);
    assert.equal(session?.projectPath, worktree);
    const [workflow] = await db
      .select()
      .from(t.autonomousWorkflows)
      .where(eq(t.autonomousWorkflows.workflowId, workflowId));
    assert.equal(workflow?.mainSessionId, null, 'openLine does not need ensureLines');
    // The line's token is revoked once the CLI is gone, and its id is recorded on the line.
    const tokens = await db.select().from(t.proxyTokens).where(eq(t.proxyTokens.sessionId, line.sessionId));
    assert.equal(tokens.length, 1);
    assert.equal(tokens[0]!.provider, 'anthropic');
    assert.ok(tokens[0]!.revokedAt);
    assert.equal(line.proxyTokenId, tokens[0]!.jti);

    // Activity events: tool use, text, usage, retry, system; no empty text, no thinking.
    const types = new Set(events.map((e) => e.type));
    for (const type of ['tool_use', 'assistant_text', 'usage', 'retry', 'system'] as const)
      assert.ok(types.has(type), type);
    assert.ok(events.every((e) => e.workflowId === workflowId && e.line === 'main'));
    assert.ok(!events.some((e) => e.type === 'assistant_text' && !e.text?.trim()));
    assert.ok(!JSON.stringify(events).includes('private reasoning'));
    assert.deepEqual(
      events.filter((e) => e.type === 'tool_use').map((e) => e.tool),
      ['Write', 'Edit'],
    );
    // No proxy token in the result, events, heartbeats or logs.
    for (const what of [result, events, heartbeats, world.app.logs])
      assert.ok(!JSON.stringify(what).includes('svcpt_'), 'a proxy token leaked');
    assert.ok(heartbeats.length > 0);
  });

  test('the next step resumes the bound provider session and counts only its own calls', async () => {
    const { workflowId, worktree } = await newWorkflow(world);
    writeScript(worktree, {
      steps: [{ call: 2 }],
      whenResumed: [{ call: 1 }, { write: { path: 'b.txt', content: 'b' } }],
    });
    const first = await run(input(workflowId, worktree));
    assert.equal(first.outcome, 'ok');
    assert.equal(first.usage.requests, 2);
    assert.equal(first.attempts[0]!.resumed, false);
    // With the cursor the first step returned.
    const second = await run(input(workflowId, worktree, { usageCursor: first.usageCursor }));
    assert.equal(second.outcome, 'ok', JSON.stringify(second));
    assert.equal(second.attempts[0]!.resumed, true);
    assert.equal(second.providerSessionId, first.providerSessionId);
    assert.ok(existsSync(path.join(worktree, 'b.txt')), 'the resumed conversation ran its script');
    assert.equal(second.usage.requests, 1);
    assert.equal(second.usage.total, PER_CALL.totalTokens);
    // Without a cursor: counted from the line's current position, still only the step's own call.
    const third = await run(input(workflowId, worktree));
    assert.equal(third.usage.requests, 1);
    // The conversation lives in the line's own CLI home (HOME), kept across runs.
    const home = lineHomePath(world.app.settings.dataDir, workflowId, 'main');
    assert.ok(existsSync(path.join(home, '.fake-cli', 'sessions', first.providerSessionId!)));
    // Lines are independent: the review line starts fresh.
    const review = await run(input(workflowId, worktree, { line: 'review' }));
    assert.equal(review.attempts[0]!.resumed, false);
    assert.notEqual(review.providerSessionId, first.providerSessionId);
    assert.equal(review.usage.requests, 2);
  });

  test('the CLI starts from an empty environment: no SVC_ or DATABASE_ variables, no secrets', async () => {
    process.env.SVC_ENCRYPTION_KEY ??= 'parent-secret';
    process.env.DATABASE_URL_SHADOW = 'postgres://user:pw@host/db';
    process.env.SVC_TEST_SECRET = 'do-not-pass';
    const { workflowId, worktree } = await newWorkflow(world);
    writeScript(worktree, { envKeysFile: '.svc-fake/env.json', steps: [{ call: 1 }] });
    const result = await run(input(workflowId, worktree));
    assert.equal(result.outcome, 'ok');
    const keys = JSON.parse(readFileSync(path.join(worktree, '.svc-fake/env.json'), 'utf8')) as string[];
    assert.ok(!keys.some((k) => k.startsWith('SVC_') || k.startsWith('DATABASE_')), keys.join(','));
    assert.ok(!keys.includes('OPENAI_API_KEY') && !keys.includes('TEMPORAL_ADDRESS'));
    const allowed = new Set([
      'PATH',
      'HOME',
      'LANG', // isolated runs (services/autonomous/runner/isolation/agent-env.ts) set a fixed locale
      'ANTHROPIC_API_KEY',
      'ANTHROPIC_BASE_URL',
      'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC',
      'DISABLE_TELEMETRY',
      'DISABLE_ERROR_REPORTING',
      'DISABLE_AUTOUPDATER',
      'DISABLE_BUG_COMMAND',
      // bubblewrap sets it after --chdir: the sandbox's working directory, not a secret.
      'PWD',
    ]);
    const extra = keys.filter((k) => !allowed.has(k));
    assert.deepEqual(extra, [], `unexpected variables (besides what node itself sets): ${extra}`);
    delete process.env.DATABASE_URL_SHADOW;
    delete process.env.SVC_TEST_SECRET;
  });

  test('pause freezes the process group (state T), resume continues it, frozen time is not timed out', async () => {
    const { workflowId, worktree } = await newWorkflow(world);
    writeScript(worktree, {
      pidFile: '.svc-fake/pid',
      steps: [{ sleep: 3000 }, { write: { path: 'after.txt', content: 'x' } }, { call: 1 }],
    });
    const { events, off } = collect(workflowId);
    // Frozen time is not running time: 3 s of work plus 4+ s paused stays within a 7 s timeout.
    const running = run(input(workflowId, worktree, { timeoutSeconds: 7 }));
    let settled = false;
    void running.then(() => {
      settled = true;
    });
    const pid = await sandboxPid(path.join(worktree, '.svc-fake/pid'), worktree);
    await setStatus(world, workflowId, 'paused');
    const deadline = Date.now() + 5000;
    while (processState(pid) !== 'T' && Date.now() < deadline) await sleep(25);
    assert.equal(processState(pid), 'T');
    await sleep(4000); // longer than the script's sleep: a running process would have finished
    assert.equal(processState(pid), 'T');
    assert.equal(settled, false);
    assert.ok(!existsSync(path.join(worktree, 'after.txt')));
    await setStatus(world, workflowId, 'developing');
    const result = await running;
    off();
    assert.equal(result.outcome, 'ok', JSON.stringify(result));
    assert.ok(existsSync(path.join(worktree, 'after.txt')));
    const subtypes = events.filter((e) => e.type === 'system').map((e) => e.subtype);
    assert.ok(subtypes.includes('paused') && subtypes.includes('resumed'), subtypes.join(','));
    assert.ok(heartbeats.some((h) => (h as { state: string }).state === 'paused'));
  });

  test('cancellation (activity signal) kills the whole group: no leftover process', async () => {
    const { workflowId, worktree } = await newWorkflow(world);
    writeScript(worktree, {
      pidFile: '.svc-fake/pid',
      steps: [
        { child: '.svc-fake/child.pid' },
        { call: 1 },
        { write: { path: '.svc-fake/called', content: 'yes' } },
        { sleep: 60_000 },
      ],
    });
    const abort = new AbortController();
    const started = Date.now();
    const running = run(input(workflowId, worktree), abort.signal);
    const pid = await sandboxPid(path.join(worktree, '.svc-fake/pid'), worktree);
    const child = await sandboxPid(path.join(worktree, '.svc-fake/child.pid'), worktree);
    await waitForFile(path.join(worktree, '.svc-fake/called'));
    assert.ok(processState(child) !== null);
    abort.abort();
    const result = await running;
    assert.equal(result.outcome, 'cancelled');
    assert.equal(result.errorEnvelope?.outcome, 'cancelled');
    assert.ok(await waitGone(pid), 'the CLI is gone');
    assert.ok(await waitGone(child), 'its grandchild is gone');
    assert.ok(Date.now() - started < 20_000);
    // The call it made before the cancel is still the step's usage.
    assert.equal(result.usage.requests, 1);
  });

  test('a workflow set to cancelled in the database stops the run, even while paused', async () => {
    const { workflowId, worktree } = await newWorkflow(world);
    writeScript(worktree, { pidFile: '.svc-fake/pid', steps: [{ sleep: 60_000 }] });
    const running = run(input(workflowId, worktree));
    const pid = await sandboxPid(path.join(worktree, '.svc-fake/pid'), worktree);
    await setStatus(world, workflowId, 'paused');
    const deadline = Date.now() + 5000;
    while (processState(pid) !== 'T' && Date.now() < deadline) await sleep(25);
    await setStatus(world, workflowId, 'cancelled');
    const result = await running;
    assert.equal(result.outcome, 'cancelled');
    assert.ok(await waitGone(pid));
  });

  test('the task timeout kills the group', async () => {
    const { workflowId, worktree } = await newWorkflow(world);
    writeScript(worktree, {
      pidFile: '.svc-fake/pid',
      steps: [{ child: '.svc-fake/child.pid' }, { sleep: 60_000 }],
    });
    const started = Date.now();
    const running = run(input(workflowId, worktree, { timeoutSeconds: 1 }));
    const pid = await sandboxPid(path.join(worktree, '.svc-fake/pid'), worktree);
    const child = await sandboxPid(path.join(worktree, '.svc-fake/child.pid'), worktree);
    const result = await running;
    assert.equal(result.outcome, 'timeout');
    assert.ok(Date.now() - started < 15_000);
    assert.ok(await waitGone(pid));
    assert.ok(await waitGone(child));
  });

  test('context overflow: retried once on the same line with a fresh conversation; both attempts counted', async () => {
    const { workflowId, worktree } = await newWorkflow(world);
    writeScript(worktree, {
      steps: [{ call: 2 }, { write: { path: 'fresh.txt', content: 'fresh' } }],
      whenResumed: [{ call: 1 }, { overflow: true }],
    });
    const first = await run(input(workflowId, worktree));
    assert.equal(first.outcome, 'ok');
    const { events, off } = collect(workflowId);
    const second = await run(
      input(workflowId, worktree, {
        usageCursor: first.usageCursor,
        compactPrompt: 'compact: continue the task',
      }),
    );
    off();
    assert.equal(second.outcome, 'ok', JSON.stringify(second));
    assert.equal(second.attempts.length, 2);
    const [failed, retried] = second.attempts;
    assert.equal(failed!.outcome, 'context_overflow');
    assert.equal(failed!.resumed, true);
    assert.equal(failed!.providerSessionId, first.providerSessionId);
    assert.equal(failed!.errorEnvelope?.code, 'context_length_exceeded');
    assert.equal(failed!.usage.requests, 1);
    assert.equal(retried!.outcome, 'ok');
    assert.equal(retried!.resumed, false);
    assert.equal(retried!.usage.requests, 2);
    assert.equal(second.usage.requests, 3);
    assert.equal(second.usage.total, 3 * PER_CALL.totalTokens);
    assert.notEqual(second.providerSessionId, first.providerSessionId);
    const line = await sessionLinesRepository(world.app.database).find(workflowId, 'main');
    assert.equal(
      line?.providerSessionId,
      second.providerSessionId,
      'the new conversation is bound to the same line',
    );
    assert.ok(events.some((e) => e.type === 'retry' && e.attempt === 2));
    assert.ok(existsSync(path.join(worktree, 'fresh.txt')));
  });

  test('runner failure and empty output are told apart from success', async () => {
    const { workflowId, worktree } = await newWorkflow(world);
    writeScript(worktree, { steps: [{ fail: 3 }] });
    const failed = await run(input(workflowId, worktree));
    assert.equal(failed.outcome, 'runner_failure');
    assert.equal(failed.exitCode, 3);
    assert.match(failed.errorEnvelope?.stderr ?? '', /failing on purpose/);
    writeScript(worktree, { steps: [], final: '' });
    const empty = await run(input(workflowId, worktree, { line: 'test' }));
    assert.equal(empty.outcome, 'empty_output');
    assert.equal(empty.usage.requests, 0);
    // An executable that does not exist.
    world.app.settings.autonomous.cli_paths = { cli_beta: '/nonexistent/cli' };
    try {
      const missing = await run(input(workflowId, worktree, { line: 'verification' }));
      assert.equal(missing.outcome, 'runner_failure');
      assert.match(missing.errorEnvelope?.message ?? '', /could not be started/);
    } finally {
      world.app.settings.autonomous.cli_paths = { cli_beta: FAKE_CLI };
    }
  });

  test('unknown workflow and missing worktree are refused; a leaked token is dead once the run ends', async () => {
    const { workflowId, worktree } = await newWorkflow(world);
    await assert.rejects(run(input('wf-does-not-exist', worktree)), /not found/);
    await assert.rejects(run(input(workflowId, path.join(worktree, 'missing'))), /not a directory/);
    writeScript(worktree, { steps: [{ keyFile: '.svc-fake/key' }, { call: 1 }] });
    const result = await run(input(workflowId, worktree));
    assert.equal(result.outcome, 'ok');
    const token = readFileSync(path.join(worktree, '.svc-fake/key'), 'utf8');
    assert.ok(token.startsWith('svcpt_'), 'the CLI got a proxy token, not a provider key');
    for (const what of [result, heartbeats, world.app.logs])
      assert.ok(!JSON.stringify(what).includes(token), 'the token leaked');
    // Replayed after the run (e.g. read from the worktree by someone else): revoked, refused.
    const replay = await fetch(`${world.app.url}/api/remote/llm-proxy/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': token, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(replay.status, 401);
    const { db, t } = world.app.database;
    const line = await sessionLinesRepository(world.app.database).find(workflowId, 'main');
    const tokens = await db
      .select()
      .from(t.proxyTokens)
      .where(and(eq(t.proxyTokens.sessionId, line!.sessionId)));
    assert.ok(tokens.length >= 1 && tokens.every((r) => r.revokedAt !== null));
  });
});

describe('session lines and per-step usage', () => {
  const deps = () => ({ database: world.app.database, settings: world.app.settings, now: () => new Date() });

  test('ensureLines: four stable lines, each an autonomous agent session of the owner; idempotent', async () => {
    const lines = sessionLines(deps());
    const { workflowId, worktree } = await newWorkflow(world);
    const first = await lines.ensureLines(workflowId, 'cli_beta');
    assert.deepEqual(
      first.map((l) => l.line),
      ['main', 'review', 'test', 'verification'],
    );
    assert.equal(new Set(first.map((l) => l.sessionId)).size, 4);
    const again = await lines.ensureLines(workflowId, 'cli_beta');
    assert.deepEqual(again, first);
    const { db, t } = world.app.database;
    const [w] = await db
      .select()
      .from(t.autonomousWorkflows)
      .where(eq(t.autonomousWorkflows.workflowId, workflowId));
    assert.deepEqual(
      [w?.mainSessionId, w?.reviewSessionId, w?.testSessionId, w?.verificationSessionId],
      first.map((l) => l.sessionId),
    );
    for (const l of first) {
      const [s] = await db.select().from(t.agentSessions).where(eq(t.agentSessions.sessionId, l.sessionId));
      assert.equal(s?.sessionType, 'autonomous');
      assert.equal(s?.userId, world.userId);
      assert.equal(s?.projectPath, worktree);
    }
    // closeLines: sessions completed, so a token of the line would no longer be accepted by the proxy.
    await lines.closeLines(workflowId);
    const statuses = await Promise.all(
      first.map(
        async (l) =>
          (await db.select().from(t.agentSessions).where(eq(t.agentSessions.sessionId, l.sessionId)))[0]
            ?.status,
      ),
    );
    assert.deepEqual(statuses, ['completed', 'completed', 'completed', 'completed']);
  });

  test('the cursor counts each proxied row of the line exactly once, a late row with the next step', async () => {
    const usage = lineUsage(deps());
    const { db, t } = world.app.database;
    const sessionId = `line-${Date.now()}`;
    let n = 0;
    const row = (session: string, tokens: number, extra: Record<string, unknown> = {}) => ({
      date: '2026-01-01',
      toolName: 'cli_beta',
      messageId: `m-${sessionId}-${++n}`,
      role: 'assistant',
      agentSessionId: session,
      messageSource: 'proxy',
      tokensUsed: tokens,
      inputTokens: tokens - 1,
      outputTokens: 1,
      ...extra,
    });
    assert.equal(await usage.cursorNow(sessionId), 0);
    await db.insert(t.dailyMessages).values([row(sessionId, 10), row(sessionId, 20)]);
    // Rows that are not the line's proxied calls: another session, a prompt row, an uploaded row.
    await db
      .insert(t.dailyMessages)
      .values([
        row('other-session', 1000),
        row(sessionId, 1000, { role: 'user' }),
        row(sessionId, 1000, { messageSource: 'upload' }),
      ]);
    const step1 = await usage.settle(sessionId, 0);
    assert.deepEqual(
      { total: step1.total, input: step1.input, output: step1.output, requests: step1.requests },
      { total: 30, input: 28, output: 2, requests: 2 },
    );
    // A row of step 1 written after step 1 was read (a late flush) goes to step 2, never lost.
    await db.insert(t.dailyMessages).values(row(sessionId, 5));
    const step2 = await usage.since(sessionId, step1.cursor);
    assert.equal(step2.total, 5);
    assert.equal(step2.requests, 1);
    assert.ok(step2.cursor > step1.cursor);
    const step3 = await usage.since(sessionId, step2.cursor);
    assert.equal(step3.requests, 0, 'nothing counted twice');
    assert.equal(step3.cursor, step2.cursor);
  });
});

describe('leftover CLI of a dead worker', () => {
  test('the next run of the line kills a group an earlier run left behind (and only that process)', async () => {
    // The unisolated path (the group recorded in the line's home, run as the service account), set
    // explicitly: with the agent account present `auto` would isolate, and an isolated run's leftovers
    // are the account's processes (test/integration/autonomous/isolation.test.ts covers those).
    const mode = world.app.settings.SVC_AUTONOMOUS_ISOLATION;
    world.app.settings.SVC_AUTONOMOUS_ISOLATION = 'off';
    const { workflowId, worktree } = await newWorkflow(world);
    // A "CLI" of a worker that was killed: detached, its own group, recorded in the line's home.
    const orphan = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 600000)'], {
      detached: true,
      stdio: 'ignore',
    });
    orphan.unref();
    const home = lineHomePath(world.app.settings.dataDir, workflowId, 'main');
    mkdirSync(home, { recursive: true });
    recordGroup(home, orphan.pid!);
    // An unrelated process whose pid is recorded with a wrong start time (a recycled pid) survives.
    const bystander = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 600000)'], {
      detached: true,
      stdio: 'ignore',
    });
    bystander.unref();
    const testHome = lineHomePath(world.app.settings.dataDir, workflowId, 'test');
    mkdirSync(testHome, { recursive: true });
    writeFileSync(path.join(testHome, '.svc-runner-pgid'), `${bystander.pid} 1\n`);
    try {
      writeScript(worktree, { steps: [{ text: 'hello' }] });
      const { events, off } = collect(workflowId);
      const result = await run(input(workflowId, worktree));
      const other = await run(input(workflowId, worktree, { line: 'test' }));
      off();
      assert.equal(result.outcome, 'ok');
      assert.equal(other.outcome, 'ok');
      assert.ok(await waitGone(orphan.pid!), 'the orphaned group is killed');
      assert.ok(events.some((e) => e.subtype === 'leftover_killed' && e.line === 'main'));
      assert.ok(!events.some((e) => e.subtype === 'leftover_killed' && e.line === 'test'));
      assert.notEqual(processState(bystander.pid!), null);
    } finally {
      world.app.settings.SVC_AUTONOMOUS_ISOLATION = mode;
      try {
        process.kill(bystander.pid!, 'SIGKILL');
        process.kill(orphan.pid!, 'SIGKILL');
      } catch {}
    }
  });
});
