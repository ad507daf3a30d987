// The daily retention schedule on a real Temporal dev server: the worker creates it (every 24 h);
// a triggered run applies every tenant's retention and purges expired login sessions, expired or
// revoked proxy tokens, consumed/expired registration tokens and old remote command/output rows,
// keeps everything current, and writes one audit record.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { auditRepository } from '../../db/repositories/audit.ts';
import { retentionScheduleId } from '../../services/maintenance-schedules.ts';
import { createTenant } from '../support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../support/harness.ts';
import { login } from '../support/session.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp({ worker: true });
});
after(() => app?.close());

const DAY = 86_400_000;
const ago = (days: number) => new Date(Date.now() - days * DAY);
const q = (text: string, params: unknown[] = []) =>
  app.database.sql.query<Record<string, unknown>>(text, params);
const count = async (table: string, where: string, params: unknown[]) =>
  Number((await q(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`, params))[0]?.n);

test('the retention schedule purges expired credentials, old remote rows and expired tenant data', async () => {
  const admin = await login(app.url, ADMIN.username, ADMIN.password);
  const tenant = await createTenant(app, admin);
  const uid = admin.user.id;
  await q('INSERT INTO sessions (token, user_id, expires_at) VALUES (?, ?, ?)', ['old-session', uid, ago(1)]);
  await q('INSERT INTO web_user_auth_sessions (user_id, session_token, expires_at) VALUES (?, ?, ?)', [
    uid,
    'old-web',
    ago(1),
  ]);
  await q('INSERT INTO web_user_auth_sessions (user_id, session_token, expires_at) VALUES (?, ?, ?)', [
    uid,
    'live-web',
    ago(-1),
  ]);
  for (const [jti, expires, revoked] of [
    ['expired', ago(1), null],
    ['revoked-long-ago', ago(-1), ago(40)],
    ['revoked-now', ago(-1), ago(0)],
    ['live', ago(-1), null],
  ] as const)
    await q(
      'INSERT INTO proxy_tokens (jti, session_id, user_id, provider, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?)',
      [jti, 's', uid, 'openai', expires, revoked],
    );
  for (const [hash, consumed, expires] of [
    ['consumed-old', ago(40), null],
    ['consumed-recent', ago(1), null],
    ['expired-old', null, ago(40)],
    ['fresh', null, ago(-1)],
  ] as const)
    await q(
      'INSERT INTO registration_tokens (token_hash, tenant_id, consumed_at, expires_at) VALUES (?, ?, ?, ?)',
      [hash, tenant, consumed, expires],
    );
  for (const [id, created] of [
    ['cmd-old', ago(40)],
    ['cmd-new', ago(0)],
  ] as const) {
    await q(
      'INSERT INTO remote_runtime_commands (command_id, machine_id, command_type, created_at) VALUES (?, ?, ?, ?)',
      [id, 'm', 'run', created],
    );
    await q(
      'INSERT INTO remote_runtime_outputs (session_id, event_index, stream, created_at) VALUES (?, ?, ?, ?)',
      [id, 1, 'stdout', created],
    );
  }
  await q(
    'INSERT INTO daily_messages (date, tool_name, host_name, message_id, role, tenant_id) VALUES (?, ?, ?, ?, ?, ?)',
    [ago(400).toISOString().slice(0, 10), 'cli_alpha', 'h', 'very-old', 'assistant', tenant],
  );

  const client = await app.deps.temporal.client();
  const handle = client.schedule.getHandle(retentionScheduleId(app.settings.TEMPORAL_TASK_QUEUE));
  const described = await handle.describe();
  assert.equal(described.spec.intervals?.[0]?.every, DAY);
  assert.equal(described.action.type, 'startWorkflow');
  await handle.trigger();
  let result: unknown;
  for (let i = 0; i < 100 && result === undefined; i++) {
    const started = (await handle.describe()).info.recentActions.at(-1)?.action;
    if (started) result = await client.workflow.getHandle(started.workflow.workflowId).result();
    else await sleep(100);
  }
  assert.ok(typeof result === 'number' && result >= 9, String(result));

  assert.equal(await count('sessions', 'token = ?', ['old-session']), 0);
  assert.equal(await count('web_user_auth_sessions', 'session_token IN (?, ?)', ['old-web', 'live-web']), 1);
  const tokens = (await q('SELECT jti FROM proxy_tokens ORDER BY jti')).map((r) => r.jti);
  assert.deepEqual(tokens, ['live', 'revoked-now']);
  const reg = (await q('SELECT token_hash FROM registration_tokens ORDER BY token_hash')).map(
    (r) => r.token_hash,
  );
  assert.deepEqual(reg, ['consumed-recent', 'fresh']);
  assert.deepEqual(
    (await q('SELECT command_id FROM remote_runtime_commands')).map((r) => r.command_id),
    ['cmd-new'],
  );
  assert.deepEqual(
    (await q('SELECT session_id FROM remote_runtime_outputs')).map((r) => r.session_id),
    ['cmd-new'],
  );
  assert.equal(await count('daily_messages', 'message_id = ?', ['very-old']), 0);

  const logs = await auditRepository(app.database).list(
    { kind: 'all' },
    { action: 'COMPLIANCE_RETENTION_CLEANUP' },
    { limit: 5, offset: 0 },
  );
  assert.equal(logs.length, 1);
  assert.equal(logs[0]?.username, 'system');
  assert.match(logs[0]?.details ?? '', /"scheduled":true/);
});
