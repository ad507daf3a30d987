// `npm run collect` (bin/collect.ts) as a child process against the running test app: it reads fixture
// transcripts with the same readers as the server, posts them to /api/upload/batch, prints a progress
// line per source, keeps a state file so a second run uploads nothing new, takes the key from
// SVC_UPLOAD_AUTH_KEY, and exits non-zero with a clear message on a wrong key (403), a server without
// uploads (503), an unreachable server, or bad arguments. Figures are checked in the database.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { uploadTokensRepository } from '../../db/repositories/upload-tokens.ts';
import { hashUploadToken, newUploadToken, uploadTokenHint } from '../../domain/upload-tokens.ts';
import {
  claudeAssistant,
  claudeFile,
  claudeUser,
  codexFile,
  codexMessage,
  codexMeta,
  codexTokenCount,
  jsonl,
  writeTranscript,
} from '../fixtures/transcripts.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';

const root = mkdtempSync(path.join(os.tmpdir(), 'svc-collect-cli-'));
const claudeDir = path.join(root, 'claude');
const codexDir = path.join(root, 'codex');
const statePath = path.join(root, 'state', 'collect-state.json');
const S = '22222222-3333-4444-8555-666666666666';
const CX = '0199a3c2-0000-7000-8000-000000000042';
const SENDER = 'dev@workstation';

let app: TestApp;
let userId: number;

const q = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
  app.database.sql.query<T>(text, params);
const at = (s: number) => new Date(Date.UTC(2026, 3, 2, 8, 0, s)).toISOString();

/** Runs `npm run collect -- ...args`; resolves with the exit code and output. */
function collect(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', 'collect', '--', ...args], {
      env: { ...process.env, SVC_UPLOAD_AUTH_KEY: '', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('exit', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

const common = (over: { state?: string; host?: string } = {}) => [
  '--server',
  app.url,
  '--state',
  over.state ?? statePath,
  '--claude-dir',
  claudeDir,
  '--codex-dir',
  codexDir,
  '--sender',
  SENDER,
  '--host',
  over.host ?? 'ws-7',
  '--settle-seconds',
  '0',
];

before(async () => {
  app = await startTestApp();
  const [u] = await q<{ id: number }>(
    `INSERT INTO users (username, password_hash) VALUES ('cli-dev', 'x') RETURNING id`,
  );
  userId = Number(u!.id);
  await q(`INSERT INTO user_tool_accounts (user_id, tool_account, tool_type) VALUES (?, ?, 'claude')`, [
    userId,
    SENDER,
  ]);
  writeTranscript(
    claudeFile(claudeDir, S),
    jsonl([
      claudeUser({ uuid: 'k-u1', sessionId: S, timestamp: at(1), text: 'hi' }),
      claudeAssistant({
        uuid: 'k-a1',
        sessionId: S,
        timestamp: at(2),
        messageId: 'msg_k1',
        block: { type: 'text', text: 'a' },
        usage: { input_tokens: 7, output_tokens: 3 },
      }),
      claudeAssistant({
        uuid: 'k-a2',
        sessionId: S,
        timestamp: at(3),
        messageId: 'msg_k1',
        block: { type: 'text', text: 'b' },
        usage: { input_tokens: 7, output_tokens: 3 },
      }),
    ]) + 'garbage\n',
  );
  writeTranscript(
    codexFile(codexDir, CX, '2026/04/02'),
    jsonl([
      codexMeta(CX, at(0)),
      codexMessage(at(1), 'user', 'q'),
      codexMessage(at(2), 'assistant', 'a'),
      codexTokenCount(at(3), { input_tokens: 40, output_tokens: 2 }),
    ]),
  );
});
after(async () => {
  await app?.close();
});

test('uploads new messages with a progress line, then resumes from its state file', async () => {
  const first = await collect([...common(), '--upload-key', 'test-upload-key']);
  assert.equal(first.code, 0, first.stderr);
  assert.match(
    first.stdout,
    /^claude_code: files 1 \(read 1\), messages 2, stored 2, duplicates 0, errors 1$/m,
  );
  assert.match(first.stdout, /^codex: files 1 \(read 1\), messages 2, stored 2, duplicates 0, errors 0$/m);
  assert.match(first.stderr, new RegExp(`${S}\\.jsonl:4: not valid JSON`));
  assert.ok(existsSync(statePath));
  const saved = JSON.parse(readFileSync(statePath, 'utf8'));
  assert.equal(Object.keys(saved.files.claude_code).length, 1);

  const rows = await q<Record<string, any>>(
    `SELECT tool_name, message_id, user_id, host_name, tokens_used FROM daily_messages ORDER BY tool_name, message_id`,
  );
  assert.equal(rows.length, 4);
  for (const r of rows) {
    assert.equal(Number(r.user_id), userId, 'attributed through user_tool_accounts');
    assert.equal(r.host_name, 'ws-7');
  }
  assert.deepEqual(
    rows.filter((r) => r.tool_name === 'claude_code').map((r) => [r.message_id, Number(r.tokens_used)]),
    [
      ['k-u1', 0],
      ['msg_k1', 10],
    ],
  );

  // The key from the environment; nothing new: nothing read, nothing sent.
  const second = await collect(common(), { SVC_UPLOAD_AUTH_KEY: 'test-upload-key' });
  assert.equal(second.code, 0, second.stderr);
  assert.match(
    second.stdout,
    /^claude_code: files 1 \(read 0\), messages 0, stored 0, duplicates 0, errors 0$/m,
  );
  assert.match(second.stdout, /^codex: files 1 \(read 0\), messages 0, stored 0, duplicates 0, errors 0$/m);

  // An appended line is all a third run sends.
  writeTranscript(
    claudeFile(claudeDir, S),
    jsonl([claudeUser({ uuid: 'k-u2', sessionId: S, timestamp: at(9), text: 'more' })]),
    true,
  );
  const third = await collect(common(), { SVC_UPLOAD_AUTH_KEY: 'test-upload-key' });
  assert.match(
    third.stdout,
    /^claude_code: files 1 \(read 1\), messages 1, stored 1, duplicates 0, errors 0$/m,
  );
  const [n] = await q<{ n: number }>('SELECT COUNT(*) AS n FROM daily_messages');
  assert.equal(Number(n!.n), 5);

  // Without the state file everything is read again and the server counts it as duplicates.
  const fresh = await collect(
    [...common().slice(0, 2), '--state', path.join(root, 'other.json'), ...common().slice(4)],
    {
      SVC_UPLOAD_AUTH_KEY: 'test-upload-key',
    },
  );
  assert.match(
    fresh.stdout,
    /^claude_code: files 1 \(read 1\), messages 3, stored 0, duplicates 3, errors 1$/m,
  );
});

test('a wrong key, a server without uploads or no server: non-zero exit with the reason', async () => {
  const wrong = await collect([
    ...common(),
    '--state',
    path.join(root, 'wrong.json'),
    '--upload-key',
    'nope',
  ]);
  assert.equal(wrong.code, 2);
  assert.match(wrong.stderr, /refused the upload key \(403\)/);
  assert.ok(!existsSync(path.join(root, 'wrong.json')), 'nothing accepted, nothing remembered');

  const disabled = http.createServer((_req, res) => {
    res.writeHead(503, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        error: 'Uploads are disabled: the server has no upload key (set SVC_UPLOAD_AUTH_KEY)',
      }),
    );
  });
  await new Promise<void>((r) => disabled.listen(0, '127.0.0.1', r));
  const port = (disabled.address() as AddressInfo).port;
  const off = await collect([
    ...common(),
    '--server',
    `http://127.0.0.1:${port}`,
    '--state',
    path.join(root, 'off.json'),
    '--upload-key',
    'k',
  ]);
  assert.equal(off.code, 2);
  assert.match(off.stderr, /does not accept uploads \(503\): Uploads are disabled/);
  await new Promise((r) => disabled.close(r));

  const gone = await collect([
    ...common(),
    '--server',
    `http://127.0.0.1:${port}`,
    '--state',
    path.join(root, 'gone.json'),
    '--upload-key',
    'k',
  ]);
  assert.equal(gone.code, 2);
  assert.match(gone.stderr, /Cannot reach the server at http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/);

  const noKey = await collect(common());
  assert.equal(noKey.code, 1);
  assert.match(
    noKey.stderr,
    /an upload token or key is required: --upload-token TOKEN \(SVC_UPLOAD_TOKEN\) or --upload-key KEY/,
  );
  const badSince = await collect([...common(), '--upload-key', 'k', '--since', '2026-13-01']);
  assert.equal(badSince.code, 1);
  assert.match(badSince.stderr, /--since must be a date YYYY-MM-DD/);
});

test('--dry-run reads and counts but sends and remembers nothing', async () => {
  const state = path.join(root, 'dry.json');
  const dry = await collect([...common(), '--state', state, '--dry-run']);
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(
    dry.stdout,
    /^codex: files 1 \(read 1\), messages 2, stored 0, duplicates 0, errors 0 \(dry run: nothing uploaded\)$/m,
  );
  assert.ok(!existsSync(state));
});

test('with a personal upload token (SVC_UPLOAD_TOKEN) the rows count for its owner, not for --sender', async () => {
  const [o] = await q<{ id: number }>(
    `INSERT INTO users (username, password_hash) VALUES ('token-owner', 'x') RETURNING id`,
  );
  const owner = Number(o!.id);
  const token = newUploadToken();
  await uploadTokensRepository(app.database).create({
    userId: owner,
    tenantId: null,
    name: 'workstation',
    tokenHash: hashUploadToken(token),
    prefix: uploadTokenHint(token),
    createdAt: new Date(),
    expiresAt: null,
  });
  const run = await collect(common({ state: path.join(root, 'token.json'), host: 'ws-token' }), {
    SVC_UPLOAD_TOKEN: token,
  });
  assert.equal(run.code, 0, run.stderr);
  const users = await q<{ user_id: number }>(
    'SELECT DISTINCT user_id FROM daily_messages WHERE host_name = ?',
    ['ws-token'],
  );
  assert.deepEqual(
    users.map((u) => Number(u.user_id)),
    [owner],
  );
});
