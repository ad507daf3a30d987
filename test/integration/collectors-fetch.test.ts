// Server-side collection runs (issue 10 item 3) on the real API, database and Temporal: POST
// /api/fetch/data starts the collection workflow over fixture transcripts written in the tools' record
// shapes; one run at a time (409 naming the running run); GET /api/fetch/status shows the runs with
// per-source counts and errors (live progress while running); GET /api/data-status per source,
// tenant-scoped. The figures are checked in the database: daily_messages rows, the user attributed
// through user_tool_accounts (the OS account is the default sender), a second run reading only the
// appended lines, a rewritten file read again. Admin-only refusals and tenant isolation included.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { runWorker } from '../../bin/runtime.ts';
import type { RunningWorker } from '../../bin/worker-runtime.ts';
import { collectProgressQuery, collectWorkflowId } from '../../workflows/usage/contract.ts';
import {
  claudeAssistant,
  claudeFile,
  claudeUser,
  codexFile,
  codexMessage,
  codexMeta,
  codexTokenCount,
  codexTurn,
  jsonl,
  writeTranscript,
} from '../fixtures/transcripts.ts';
import { buildCast, type Cast, createUser, PASSWORD } from '../support/actors.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { api, login, type Session } from '../support/session.ts';

const claudeDir = mkdtempSync(path.join(os.tmpdir(), 'svc-claude-'));
const codexDir = mkdtempSync(path.join(os.tmpdir(), 'svc-codex-'));
const HOST = 'collector-host';
const OS_USER = os.userInfo().username;
const S1 = '11111111-2222-4333-8444-555555555555';
const CX = '0199a3c2-5f7e-7d10-b6a1-9e2f4c8d7a01';

let app: TestApp;
let cast: Cast;
let worker: RunningWorker | undefined;
let alice: number;
let noTenant: Session;

const q = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
  app.database.sql.query<T>(text, params);
const at = (s: number) => new Date(Date.UTC(2026, 2, 1, 9, 0, s)).toISOString();
const usage = { input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 1000 };

const claudeLines = [
  claudeUser({ uuid: 'c-u1', sessionId: S1, timestamp: at(1), text: 'hello' }),
  claudeAssistant({
    uuid: 'c-a1',
    sessionId: S1,
    timestamp: at(2),
    messageId: 'msg_c1',
    block: { type: 'text', text: 'hi' },
    usage,
  }),
  claudeAssistant({
    uuid: 'c-a2',
    sessionId: S1,
    timestamp: at(3),
    messageId: 'msg_c1',
    block: { type: 'tool_use', id: 't', name: 'Read', input: {} },
    usage,
  }),
  claudeUser({ uuid: 'c-u2', sessionId: S1, timestamp: at(4), text: 'thanks' }),
];
const codexLines = [
  codexMeta(CX, at(0)),
  codexTurn(at(1)),
  codexMessage(at(2), 'user', 'list files'),
  codexMessage(at(3), 'assistant', 'a.txt'),
  codexTokenCount(at(4), { input_tokens: 500, cached_input_tokens: 400, output_tokens: 50 }),
];

const post = (auth?: Session) => api(app.url, 'POST', '/api/fetch/data', { auth });
const status = (qs = '', auth: Session = cast.admin) =>
  api(app.url, 'GET', `/api/fetch/status${qs}`, { auth });
const dataStatus = (auth?: Session) => api(app.url, 'GET', '/api/data-status', { auth });
const handle = async (runId: string) =>
  (await app.deps.temporal.client()).workflow.getHandle(
    collectWorkflowId(app.settings.TEMPORAL_TASK_QUEUE),
    runId,
  );

async function runToEnd(): Promise<string> {
  const r = await post(cast.admin);
  assert.equal(r.status, 202, JSON.stringify(r.body));
  await (await handle(r.body.run_id)).result();
  return r.body.run_id;
}

before(async () => {
  app = await startTestApp({
    env: {
      SVC_COLLECTORS__CLAUDE_CODE_DIRS: claudeDir,
      SVC_COLLECTORS__CODEX_DIRS: `${codexDir},${path.join(codexDir, 'not-there')}`,
      SVC_COLLECTORS__HOST_NAME: HOST,
      SVC_COLLECTORS__SETTLE_SECONDS: '0',
    },
  });
  cast = await buildCast(app);
  alice = cast.actors.user.id!;
  await q(`INSERT INTO user_tool_accounts (user_id, tool_account, tool_type) VALUES (?, ?, 'os')`, [
    alice,
    OS_USER,
  ]);
  // A user whose tenant was taken away after login (login itself refuses a user without a tenant).
  const lone = await createUser(app, cast.admin, { role: 'user', tenant_id: cast.tenantA });
  noTenant = await login(app.url, lone.username, PASSWORD);
  await q('UPDATE users SET tenant_id = NULL WHERE id = ?', [lone.id]);
  writeTranscript(claudeFile(claudeDir, S1), `${jsonl(claudeLines)}{"type":"user" broken\n`);
  writeTranscript(codexFile(codexDir, CX), jsonl(codexLines));
});
after(async () => {
  await worker?.stop();
  await app?.close();
});

test('only system administrators start runs or read their status', async () => {
  assert.equal((await post()).status, 401);
  for (const name of ['tenant_admin', 'manager', 'user', 'readonly'] as const) {
    const r = await post(cast.actors[name].session);
    assert.equal(r.status, 403, name);
    assert.equal(r.body.error, 'System administrator access required');
    assert.equal((await status('', cast.actors[name].session!)).status, 403, name);
  }
  assert.equal((await api(app.url, 'GET', '/api/fetch/status')).status, 401);
  assert.equal((await dataStatus()).status, 401);
});

test('one run at a time; it waits for a worker, then stores both sources', async () => {
  // No worker polls yet: the run stays running.
  const first = await post(cast.admin);
  assert.equal(first.status, 202);
  assert.equal(first.body.status, 'running');
  assert.equal(first.body.status_url, `/api/fetch/status?run_id=${first.body.run_id}`);
  const second = await post(cast.admin);
  assert.equal(second.status, 409);
  assert.equal(second.body.error, 'A collection run is already running');
  assert.equal(second.body.run_id, first.body.run_id);
  const pending = await status(`?run_id=${first.body.run_id}`);
  assert.equal(pending.status, 200);
  assert.equal(pending.body.running, first.body.run_id);
  assert.equal(pending.body.runs[0].status, 'running');

  worker = await runWorker(
    app.settings,
    app.settings.TEMPORAL_ADDRESS!,
    app.database,
    (l) => app.logs.push(l),
    path.resolve('node_modules/.cache/svc'),
  );
  const h = await handle(first.body.run_id);
  const result = await h.result();
  assert.equal(result.status, 'completed');
  const progress = await h.query(collectProgressQuery);
  assert.deepEqual(
    progress.sources.map((s) => [s.source, s.status, s.messages, s.stored]),
    [
      ['claude_code', 'completed', 3, 3],
      ['codex', 'completed', 2, 2],
    ],
  );

  const [audit] = await q<{ n: number }>(
    `SELECT COUNT(*) AS n FROM audit_logs WHERE action = 'usage_collection_started' AND resource_id = ? AND user_id = ?`,
    [first.body.run_id, cast.admin.user.id],
  );
  assert.equal(Number(audit!.n), 1, 'starting a run is audited');

  const r = await status(`?run_id=${first.body.run_id}`);
  const run = r.body.runs[0];
  assert.equal(run.status, 'completed');
  assert.equal(run.trigger, 'api');
  assert.equal(run.requested_by, cast.admin.user.id);
  assert.deepEqual(
    [run.files_read, run.messages_read, run.messages_stored, run.duplicates, run.error_count],
    [2, 5, 5, 0, 1],
  );
  assert.ok(run.finished_at);
  const claude = run.sources.find((s: any) => s.source === 'claude_code');
  assert.deepEqual(claude.errors, [{ file: claudeFile(claudeDir, S1), line: 5, error: 'not valid JSON' }]);
  const codex = run.sources.find((s: any) => s.source === 'codex');
  assert.deepEqual(codex.missing_dirs, [path.join(codexDir, 'not-there')]);
  assert.equal(r.body.running, null);
});

test('figures in the database: one row per message, attributed through user_tool_accounts', async () => {
  const rows = await q<Record<string, any>>(
    `SELECT tool_name, message_id, role, host_name, sender_name, user_id, tenant_id, input_tokens, output_tokens,
            tokens_used, model, conversation_id FROM daily_messages WHERE host_name = ? ORDER BY tool_name, message_id`,
    [HOST],
  );
  assert.deepEqual(
    rows.filter((m) => m.tool_name === 'claude_code').map((m) => m.message_id),
    ['c-u1', 'c-u2', 'msg_c1'],
    'the split response is one row',
  );
  const codexRows = rows.filter((m) => m.tool_name === 'codex');
  assert.deepEqual(codexRows.map((m) => m.role).sort(), ['assistant', 'user']);
  for (const m of codexRows) assert.ok(m.message_id.startsWith(`${CX}:`), m.message_id);
  for (const m of rows) {
    assert.equal(m.sender_name, OS_USER);
    assert.equal(Number(m.user_id), alice, 'the OS account resolves to alice');
    assert.equal(Number(m.tenant_id), cast.tenantA);
  }
  const c1 = rows.find((m) => m.message_id === 'msg_c1')!;
  assert.deepEqual(
    [Number(c1.input_tokens), Number(c1.output_tokens), Number(c1.tokens_used)],
    [1100, 20, 1120],
  );
  const cx = rows.find((m) => m.tool_name === 'codex' && m.role === 'assistant')!;
  assert.deepEqual([Number(cx.tokens_used), cx.model, cx.conversation_id], [550, 'gpt-5-codex', CX]);
  // The ingestion's aggregates counted them: alice's day.
  const [day] = await q<{ requests: number; tokens: number }>(
    'SELECT requests, tokens FROM user_daily_stats WHERE user_id = ? AND date = ?',
    [alice, '2026-03-01'],
  );
  assert.deepEqual([Number(day!.requests), Number(day!.tokens)], [2, 1670]);
});

test('a second run reads only appended lines; a rewritten file is read again', async () => {
  writeTranscript(
    claudeFile(claudeDir, S1),
    jsonl([claudeUser({ uuid: 'c-u3', sessionId: S1, timestamp: at(9), text: 'more' })]),
    true,
  );
  const second = (await status(`?run_id=${await runToEnd()}`)).body.runs[0];
  assert.deepEqual(
    [second.files_read, second.messages_read, second.messages_stored, second.duplicates, second.error_count],
    [1, 1, 1, 0, 0],
    'only the appended line: the earlier lines (and the bad one) are not read again',
  );
  writeTranscript(codexFile(codexDir, CX), jsonl([codexMeta(CX, at(30)), ...codexLines.slice(1)]));
  const third = (await status(`?run_id=${await runToEnd()}`)).body.runs[0];
  const codex = third.sources.find((s: any) => s.source === 'codex');
  assert.deepEqual([codex.files_rewritten, codex.messages, codex.stored, codex.duplicates], [1, 2, 0, 2]);
  const [n] = await q<{ n: number }>('SELECT COUNT(*) AS n FROM daily_messages WHERE host_name = ?', [HOST]);
  assert.equal(Number(n!.n), 6);
});

test('fetch/status: newest first, limit default 20 and validated, unknown run 404', async () => {
  for (let i = 0; i < 20; i++)
    await q(
      `INSERT INTO collector_runs (run_id, "trigger", status, started_at) VALUES (?, 'api', 'completed', ?)`,
      [`old-${i}`, new Date(Date.UTC(2026, 0, 1, 0, i))],
    );
  const all = await status();
  assert.equal(all.status, 200);
  assert.equal(all.body.runs.length, 20);
  assert.equal(all.body.runs[0].run_id, 'old-19', 'newest first');
  assert.equal((await status('?limit=3')).body.runs.length, 3);
  const bad = await status('?limit=0');
  assert.equal(bad.status, 400);
  assert.match(bad.body.error, /^limit: /);
  assert.equal((await status('?limit=101')).status, 400);
  const missing = await status('?run_id=nope');
  assert.equal(missing.status, 404);
  assert.equal(missing.body.error, 'Collection run not found');
});

test('data-status: per source, messages and agent reports scoped to the tenant', async () => {
  await q(
    `INSERT INTO usage_reports (report_id, user_id, input_tokens, output_tokens, created_at) VALUES (?, ?, 1, 1, ?)`,
    ['r-a', alice, new Date(Date.UTC(2026, 2, 1, 12))],
  );
  await q(
    `INSERT INTO usage_reports (report_id, user_id, input_tokens, output_tokens, created_at) VALUES (?, ?, 1, 1, ?)`,
    ['r-b', cast.actors.other_tenant_admin.id, new Date(Date.UTC(2026, 2, 2, 12))],
  );
  const view = async (s: Session) => {
    const r = await dataStatus(s);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return Object.fromEntries(r.body.sources.map((x: any) => [x.source, x]));
  };
  const admin = await view(cast.admin);
  assert.deepEqual(
    [
      admin.claude_code.files_tracked,
      admin.claude_code.messages_stored,
      admin.codex.files_tracked,
      admin.codex.messages_stored,
    ],
    [1, 4, 1, 2],
  );
  assert.equal(admin.claude_code.last_run_status, 'completed');
  assert.ok(admin.claude_code.last_run_at);
  assert.equal(admin.claude_code.last_message_at, at(9));
  assert.deepEqual(
    [admin.agent_reports.reports, admin.agent_reports.last_received_at],
    [2, '2026-03-02T12:00:00.000Z'],
  );

  const readonlyA = await view(cast.actors.readonly.session!);
  assert.deepEqual([readonlyA.claude_code.messages_stored, readonlyA.codex.messages_stored], [4, 2]);
  assert.deepEqual(
    [readonlyA.agent_reports.reports, readonlyA.agent_reports.last_received_at],
    [1, '2026-03-01T12:00:00.000Z'],
  );

  const tenantB = await view(cast.actors.other_tenant_admin.session!);
  assert.deepEqual([tenantB.claude_code.messages_stored, tenantB.codex.messages_stored], [0, 0]);
  assert.equal(tenantB.claude_code.last_message_at, null);
  assert.equal(tenantB.agent_reports.reports, 1);
  assert.equal(tenantB.claude_code.files_tracked, 1, 'files belong to no tenant');

  const none = await view(noTenant);
  assert.deepEqual([none.claude_code.messages_stored, none.agent_reports.reports], [0, 0]);
});

test('a run whose workflow ended without recording its end shows as failed', async () => {
  const client = await app.deps.temporal.client();
  // Started on a queue no worker polls, then terminated: its row still says running.
  const h = await client.workflow.start('collectUsageWorkflow', {
    workflowId: collectWorkflowId(app.settings.TEMPORAL_TASK_QUEUE),
    taskQueue: `${app.settings.TEMPORAL_TASK_QUEUE}-idle`,
    args: [{ trigger: 'api', requestedBy: null, sources: ['claude_code'] }],
  });
  await q(
    `INSERT INTO collector_runs (run_id, "trigger", status, started_at) VALUES (?, 'api', 'running', ?)`,
    [h.firstExecutionRunId, new Date()],
  );
  await h.terminate('test');
  const r = await status(`?run_id=${h.firstExecutionRunId}`);
  assert.equal(r.body.runs[0].status, 'failed');
  assert.equal(r.body.runs[0].error, "The run's workflow ended without finishing (TERMINATED)");
  assert.equal(r.body.running, null);
  const next = await post(cast.admin);
  assert.equal(next.status, 202, 'the next run may start');
  assert.equal((await (await handle(next.body.run_id)).result()).status, 'completed');
});
