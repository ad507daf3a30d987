// The remote session page's output shaping (web/src/pages/remote/output-model.ts): merging replayed and
// live SSE output by event_index (a reload or a reconnect mid-stream loses nothing and shows nothing
// twice), the readable line of each stream-json event, and the permission prompts still unanswered.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  describeEvent,
  mergeOutput,
  nextIndex,
  type OutputEvent,
  pendingPermissions,
  permissionOf,
} from '../../web/src/pages/remote/output-model.ts';

const ev = (i: number, data = `line ${i}`, stream = 'stdout'): OutputEvent => ({
  event_index: i,
  stream,
  data,
  timestamp: '2026-01-01T00:00:00.000Z',
});
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => ev(from + k));
const indexes = (es: OutputEvent[]) => es.map((e) => e.event_index);

test('mergeOutput appends newer events in order and keeps the same array prefix', () => {
  const a = range(0, 3);
  const merged = mergeOutput(a, range(3, 5));
  assert.deepEqual(indexes(merged), [0, 1, 2, 3, 4]);
  assert.equal(mergeOutput(a, []), a, 'nothing incoming: same array');
});

test('mergeOutput drops repeats and overlaps (replay after reconnect overlapping the live tail)', () => {
  const held = range(0, 10);
  const replay = range(5, 15); // the stream resent 5..9, then new ones
  const merged = mergeOutput(held, replay);
  assert.deepEqual(
    indexes(merged),
    range(0, 15).map((e) => e.event_index),
  );
  // The same event twice in one batch, and out of order.
  const messy = mergeOutput(range(0, 2), [ev(4), ev(2), ev(3), ev(2), ev(1, 'changed')]);
  assert.deepEqual(indexes(messy), [0, 1, 2, 3, 4]);
  assert.equal(messy[1]!.data, 'line 1', 'the copy already held wins');
});

test('mergeOutput fills a gap when the missing events arrive later', () => {
  const withGap = mergeOutput(range(0, 3), [ev(6), ev(7)]);
  assert.deepEqual(indexes(withGap), [0, 1, 2, 6, 7]);
  assert.deepEqual(indexes(mergeOutput(withGap, range(3, 6))), [0, 1, 2, 3, 4, 5, 6, 7]);
});

test('nextIndex is one past the highest held index', () => {
  assert.equal(nextIndex([]), 0);
  assert.equal(nextIndex(range(0, 4)), 4);
});

test('describeEvent: assistant text, turn results, stderr, system notes, hidden protocol lines', () => {
  const assistant = JSON.stringify({
    type: 'assistant',
    message: {
      role: 'assistant',
      content: [
        { type: 'text', text: 'echo: hi' },
        { type: 'tool_use', name: 'Bash' },
      ],
    },
  });
  assert.deepEqual(describeEvent(ev(1, assistant)), {
    index: 1,
    kind: 'assistant',
    text: 'echo: hi\n[tool: Bash]',
    timestamp: '2026-01-01T00:00:00.000Z',
  });
  assert.equal(
    describeEvent(ev(2, JSON.stringify({ type: 'result', subtype: 'success' })))?.text,
    'Turn finished',
  );
  assert.equal(
    describeEvent(ev(3, JSON.stringify({ type: 'result', is_error: true, result: 'proxy said 429' })))?.text,
    'Turn failed: proxy said 429',
  );
  assert.equal(
    describeEvent(ev(4, JSON.stringify({ type: 'system', subtype: 'init', session_id: 'x' }))),
    null,
  );
  assert.equal(describeEvent(ev(5, 'boom', 'stderr'))?.kind, 'stderr');
  assert.equal(
    describeEvent(ev(6, JSON.stringify({ event: 'started', pid: 12 }), 'system'))?.text,
    'started',
  );
  assert.equal(
    describeEvent(ev(7, JSON.stringify({ event: 'turn_error', message: 'no key' }), 'system'))?.text,
    'turn_error: no key',
  );
  // Plain text and unknown JSON are shown as printed.
  assert.equal(describeEvent(ev(8, 'plain words'))?.text, 'plain words');
  assert.equal(describeEvent(ev(9, '{"type":"other"}'))?.text, '{"type":"other"}');
  assert.equal(describeEvent(ev(10, '{not json'))?.text, '{not json');
});

test('permission prompts: parsed from the permission stream, answered ones drop out', () => {
  const ask = (id: string) =>
    ev(
      0,
      JSON.stringify({
        type: 'control_request',
        request_id: id,
        request: { subtype: 'can_use_tool', tool_name: 'Bash', input: { command: 'ls' } },
      }),
      'permission',
    );
  const a = { ...ask('req-a'), event_index: 3 };
  const b = { ...ask('req-b'), event_index: 5 };
  assert.deepEqual(permissionOf(a), {
    index: 3,
    requestId: 'req-a',
    tool: 'Bash',
    input: '{"command":"ls"}',
  });
  assert.equal(permissionOf(ev(1, 'x')), null, 'other streams are not prompts');
  assert.equal(permissionOf(ev(1, '{"type":"control_request"}', 'permission')), null, 'no request id');
  const events = [ev(0), a, ev(4), b];
  assert.deepEqual(
    pendingPermissions(events, new Set()).map((p) => p.requestId),
    ['req-a', 'req-b'],
  );
  assert.deepEqual(
    pendingPermissions(events, new Set(['req-a'])).map((p) => p.requestId),
    ['req-b'],
  );
  assert.equal(describeEvent(a)?.text, 'Permission asked for Bash');
});
