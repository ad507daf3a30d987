// The upload sink of `npm run collect` (services/collectors/upload-sink.ts) against a stand-in fetch:
// how the answers of POST /api/upload/batch become figures (200/207 per-row rejections counted, a 400
// "no valid rows" is every row refused) or a run-ending UploadError (401, 403, 503, other statuses),
// and that a body too large for the server is split.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { OutgoingMessage } from '../../services/collectors/collect-source.ts';
import { UploadError, uploadSink } from '../../services/collectors/upload-sink.ts';

const msg = (i: number, content = 'x'): OutgoingMessage => ({
  message_id: `m-${i}`,
  role: 'user',
  date: '2026-03-01',
  timestamp: '2026-03-01T10:00:00.000Z',
  tool_name: 'claude_code',
  content,
  model: null,
  input_tokens: 0,
  output_tokens: 0,
  tokens_used: 0,
  parent_id: null,
  conversation_id: null,
  project_path: null,
  message_source: 'claude_code',
  host_name: 'h',
  sender_name: 's',
});

function answering(status: number, body: unknown, seen: unknown[] = []) {
  return (async (_url: string, init: RequestInit) => {
    seen.push(JSON.parse(String(init.body)));
    assert.equal((init.headers as Record<string, string>)['x-upload-auth'], 'k');
    return new Response(JSON.stringify(body), { status });
  }) as unknown as typeof fetch;
}

const sinkWith = (f: typeof fetch) =>
  uploadSink({ server: 'http://svc.test/', uploadKey: 'k', fetchImpl: f });

test('200 and 207 answers become stored, duplicates and rejected counts; 400 refuses every row', async () => {
  const ok = sinkWith(
    answering(200, { success: true, messages: { stored: 1, duplicates: 1, rejected: [] } }),
  );
  assert.deepEqual(await ok([msg(1), msg(2)]), { stored: 1, duplicates: 1, rejected: 0 });
  const partial = sinkWith(
    answering(207, {
      success: false,
      messages: { stored: 1, duplicates: 0, rejected: [{ index: 1, field: 'role' }] },
    }),
  );
  assert.deepEqual(await partial([msg(1), msg(2)]), { stored: 1, duplicates: 0, rejected: 1 });
  const none = sinkWith(answering(400, { error: 'No valid rows', messages: { rejected: [{}, {}] } }));
  assert.deepEqual(await none([msg(1), msg(2)]), { stored: 0, duplicates: 0, rejected: 2 });
});

test('401, 403, 503 and other errors end the run with the reason', async () => {
  const cases: Array<[number, RegExp]> = [
    [401, /refused the upload \(401\): no upload key was sent/],
    [403, /refused the upload key \(403\): check --upload-token or --upload-key/],
    [503, /does not accept uploads \(503\): uploads off/],
    [500, /Upload to http:\/\/svc\.test\/ failed with HTTP 500: uploads off/],
  ];
  for (const [status, reason] of cases)
    await assert.rejects(sinkWith(answering(status, { error: 'uploads off' }))([msg(1)]), (e: Error) => {
      assert.ok(e instanceof UploadError);
      assert.match(e.message, reason);
      return true;
    });
});

test('a batch whose body would pass the server limit is split', async () => {
  const seen: Array<{ messages: unknown[] }> = [];
  const sink = sinkWith(
    answering(200, { success: true, messages: { stored: 1, duplicates: 0, rejected: [] } }, seen),
  );
  const big = 'y'.repeat(15 * 1024 * 1024);
  const out = await sink([msg(1, big), msg(2, big), msg(3, big), msg(4, big)]);
  assert.deepEqual(
    seen.map((b) => b.messages.length),
    [2, 2],
  );
  assert.equal(out.stored, 2);
});
