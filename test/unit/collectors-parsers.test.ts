// The transcript readers (domain/collectors/), fed fixture lines in the tools' record shapes: Claude
// Code's split responses count their usage once, Codex's token_count events pair with the answer they
// belong to, unfinished responses are held back until settled, malformed lines become errors with
// their offsets and never stop the read.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { claudeCodeReader } from '../../domain/collectors/claude-code.ts';
import { codexReader, codexSessionIdOf } from '../../domain/collectors/codex.ts';
import { completeLines } from '../../domain/collectors/sources.ts';
import type { ReadResult, TranscriptReader } from '../../domain/collectors/transcript.ts';
import {
  claudeAssistant,
  claudeUser,
  codexFunctionCall,
  codexMessage,
  codexMeta,
  codexRateLimitsOnly,
  codexTokenCount,
  codexTurn,
  jsonl,
} from '../fixtures/transcripts.ts';

/** Feeds a JSONL text to a reader as the file reader would, from byte 0. */
function feed(reader: TranscriptReader, text: string, flush: boolean): ReadResult {
  const buf = Buffer.from(text);
  const { lines, consumed } = completeLines(buf, 0);
  for (const l of lines) reader.line(l.text, l.start, l.end);
  return reader.finish({ flush, end: consumed });
}

const S = '5b1f0e0c-7d43-4c59-9a0e-1f6f3a2b9c11';

describe('Claude Code reader', () => {
  const usage = {
    input_tokens: 10,
    output_tokens: 50,
    cache_creation_input_tokens: 200,
    cache_read_input_tokens: 3000,
  };
  const lines = [
    claudeUser({ uuid: 'u-1', sessionId: S, timestamp: '2026-03-01T23:59:58.000Z', text: 'fix the bug' }),
    claudeAssistant({
      uuid: 'a-1',
      parentUuid: 'u-1',
      sessionId: S,
      timestamp: '2026-03-02T00:00:01.000Z',
      messageId: 'msg_1',
      block: { type: 'thinking', thinking: 'hm' },
      usage: { ...usage, output_tokens: 3 },
    }),
    claudeAssistant({
      uuid: 'a-2',
      parentUuid: 'a-1',
      sessionId: S,
      timestamp: '2026-03-02T00:00:02.000Z',
      messageId: 'msg_1',
      block: { type: 'text', text: 'Looking.' },
      usage,
    }),
    claudeAssistant({
      uuid: 'a-3',
      parentUuid: 'a-2',
      sessionId: S,
      timestamp: '2026-03-02T00:00:03.000Z',
      messageId: 'msg_1',
      block: { type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } },
      usage,
    }),
    {
      ...claudeUser({
        uuid: 'u-2',
        parentUuid: 'a-3',
        sessionId: S,
        timestamp: '2026-03-02T00:00:04.000Z',
        text: '',
      }),
      message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'a.txt' }] },
    },
    claudeAssistant({
      sessionId: S,
      timestamp: '2026-03-02T00:00:05.000Z',
      messageId: 'synthetic-1',
      model: '<synthetic>',
      block: { type: 'text', text: 'API Error' },
      usage: { input_tokens: 0, output_tokens: 0 },
    }),
    { type: 'summary', summary: 'Bug fix', leafUuid: 'u-2' },
  ];

  test('a response split over several records is one message whose usage counts once', () => {
    const r = feed(claudeCodeReader(), jsonl(lines), false);
    assert.equal(r.errors.length, 0);
    assert.deepEqual(
      r.messages.map((m) => [m.message_id, m.role, m.date]),
      [
        ['u-1', 'user', '2026-03-01'],
        ['msg_1', 'assistant', '2026-03-02'],
        ['u-2', 'user', '2026-03-02'],
      ],
    );
    const a = r.messages[1]!;
    assert.equal(a.input_tokens, 10 + 200 + 3000, 'input = input + cache creation + cache read, once');
    assert.equal(a.output_tokens, 50, 'the largest output count of the records, not their sum');
    assert.equal(a.tokens_used, 3260);
    assert.equal(a.content, 'Looking.\n[tool_use: Bash]');
    assert.equal(a.model, 'claude-sonnet-4-5');
    assert.equal(a.conversation_id, S);
    assert.equal(a.project_path, '/home/dev/project');
    assert.equal(a.parent_id, 'u-1', 'the first record of the response names its parent');
    assert.equal(r.messages[2]!.content, 'a.txt');
    assert.equal(r.messages[0]!.tokens_used, 0);
    assert.equal(r.consumedTo, Buffer.byteLength(jsonl(lines)));
  });

  test('the last response stays unread until a later record closes it or the read is flushed', () => {
    const text = jsonl(lines.slice(0, 3));
    const held = feed(claudeCodeReader(), text, false);
    assert.deepEqual(
      held.messages.map((m) => m.message_id),
      ['u-1'],
    );
    assert.equal(held.consumedTo, Buffer.byteLength(jsonl(lines.slice(0, 1))), 'stops before msg_1');
    const flushed = feed(claudeCodeReader(), text, true);
    assert.deepEqual(
      flushed.messages.map((m) => m.message_id),
      ['u-1', 'msg_1'],
    );
    assert.equal(flushed.consumedTo, Buffer.byteLength(text));
  });

  test('malformed lines are errors with their offsets; the rest is read', () => {
    const good = jsonl([lines[0]]);
    const bad1 = '{"type":"user", not json\n';
    const bad2 = `${JSON.stringify({ type: 'user', uuid: 'x', message: { role: 'user', content: 'no time' } })}\n`;
    const bad3 = '[1,2]\n';
    const tail = jsonl([lines[4]]);
    const r = feed(claudeCodeReader(), good + bad1 + bad2 + bad3 + tail, false);
    assert.deepEqual(
      r.messages.map((m) => m.message_id),
      ['u-1', 'u-2'],
    );
    const at = Buffer.byteLength(good);
    assert.deepEqual(r.errors, [
      { offset: at, error: 'not valid JSON' },
      { offset: at + bad1.length, error: 'user record without a valid timestamp' },
      { offset: at + bad1.length + bad2.length, error: 'not a JSON object' },
    ]);
  });
});

describe('Codex reader', () => {
  const id = '0199a3c2-5f7e-7d10-b6a1-9e2f4c8d7a01';
  const t = (s: number) => `2026-03-01T10:00:${String(s).padStart(2, '0')}.000Z`;
  const records = [
    codexMeta(id, t(0)),
    codexMessage(t(1), 'developer', '<permissions instructions>'),
    codexTurn(t(2), 'gpt-5-codex'),
    codexMessage(t(3), 'user', 'list the files'),
    codexRateLimitsOnly(t(4)),
    codexFunctionCall(t(5)),
    codexTokenCount(t(6), { input_tokens: 1000, cached_input_tokens: 800, output_tokens: 20 }),
    codexMessage(t(7), 'assistant', 'There is a.txt.', 'msg_abc'),
    codexTokenCount(t(8), {
      input_tokens: 1100,
      cached_input_tokens: 1000,
      output_tokens: 30,
      reasoning_output_tokens: 10,
    }),
    codexMessage(t(9), 'user', 'thanks'),
    codexMessage(t(10), 'assistant', 'You are welcome.'),
    codexTokenCount(t(11), { input_tokens: 1200, output_tokens: 5 }),
  ];

  test('token_count pairs with its answer; a tool-only call carries its usage to the next answer', () => {
    const r = feed(codexReader({ sessionId: id }), jsonl(records), false);
    assert.equal(r.errors.length, 0);
    assert.deepEqual(
      r.messages.map((m) => [m.role, m.content]),
      [
        ['system', '<permissions instructions>'],
        ['user', 'list the files'],
        ['assistant', 'There is a.txt.'],
        ['user', 'thanks'],
        ['assistant', 'You are welcome.'],
      ],
    );
    const [first, second] = r.messages.filter((m) => m.role === 'assistant');
    assert.equal(first!.message_id, 'msg_abc', 'a payload id is the message id');
    assert.deepEqual([first!.input_tokens, first!.output_tokens, first!.tokens_used], [2100, 50, 2150]);
    assert.deepEqual([second!.input_tokens, second!.output_tokens, second!.tokens_used], [1200, 5, 1205]);
    assert.equal(second!.model, 'gpt-5-codex');
    assert.equal(second!.conversation_id, id);
    assert.equal(second!.project_path, '/home/dev/project');
    assert.match(second!.message_id, new RegExp(`^${id}:[0-9a-f]{32}$`));
    const again = feed(codexReader({ sessionId: id }), jsonl(records), false);
    assert.equal(again.messages[4]!.message_id, second!.message_id, 'derived ids are stable');
    assert.equal(r.consumedTo, Buffer.byteLength(jsonl(records)));
  });

  test('an answer waiting for its token_count is held back unless the read is flushed', () => {
    const text = jsonl(records.slice(0, 11));
    const held = feed(codexReader({ sessionId: id }), text, false);
    assert.deepEqual(held.messages.map((m) => m.content).slice(-2), ['There is a.txt.', 'thanks']);
    assert.equal(
      held.consumedTo,
      Buffer.byteLength(jsonl(records.slice(0, 10))),
      'stops before the open answer',
    );
    const carried = feed(codexReader({ sessionId: id }), jsonl(records.slice(0, 7)), false);
    assert.equal(
      carried.consumedTo,
      Buffer.byteLength(jsonl(records.slice(0, 6))),
      'carried usage holds too',
    );
    const flushed = feed(codexReader({ sessionId: id }), text, true);
    assert.equal(flushed.messages.at(-1)!.content, 'You are welcome.');
    assert.equal(flushed.messages.at(-1)!.tokens_used, 0);
  });

  test('malformed lines are errors; the session id comes from the file name', () => {
    const bad = '{"timestamp":"2026-03-01T10:00:00Z","type":"response_item"}\nnot json\n';
    const r = feed(codexReader({ sessionId: id }), bad + jsonl(records.slice(3, 4)), false);
    assert.equal(r.messages.length, 1);
    assert.deepEqual(
      r.errors.map((e) => e.error),
      ['record without type and payload', 'not valid JSON'],
    );
    assert.equal(codexSessionIdOf(`rollout-2026-03-01T10-00-00-${id}.jsonl`), id);
    assert.equal(codexSessionIdOf('rollout-x.jsonl'), undefined);
  });
});

test('completeLines keeps a partial last line for next time and drops CR before LF', () => {
  const { lines, consumed } = completeLines(Buffer.from('{"a":1}\r\n\n{"b":2}\n{"c":'), 100);
  assert.deepEqual(lines, [
    { text: '{"a":1}', start: 100, end: 109 },
    { text: '{"b":2}', start: 110, end: 118 },
  ]);
  assert.equal(consumed, 18);
});
