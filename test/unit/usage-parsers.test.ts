import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { anthropicMessagesUsage } from '../../domain/usage/anthropic-messages.ts';
import { geminiUsage } from '../../domain/usage/gemini.ts';
import { openAiChatUsage } from '../../domain/usage/openai-chat.ts';
import { openAiResponsesUsage } from '../../domain/usage/openai-responses.ts';
import type { UsageResult } from '../../domain/usage/usage.ts';
import { createUsageTap } from '../../domain/usage/usage-tap.ts';
import type { WireFormat } from '../../domain/usage/wire-format-name.ts';

/*
 * Provider responses written out as they appear on the wire (shapes follow the providers' API
 * references). Deliberately independent of test/fixtures/mock-provider.ts.
 * Text deltas contain multi-byte characters and escaped JSON that looks like usage, to catch both
 * split UTF-8 sequences and naive substring matching.
 */

const TRICKY_TEXT = 'Héllo 👋 he wrote \\"usage\\": {\\"prompt_tokens\\": 999} and \\"usageMetadata\\"';

function chatChunk(choices: string, usage: string): string {
  return `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_1","choices":${choices},"usage":${usage}}\n\n`;
}

const OPENAI_CHAT_JSON = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  model: 'gpt-4o-2024-08-06',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
  usage: {
    prompt_tokens: 1200,
    completion_tokens: 300,
    total_tokens: 1500,
    prompt_tokens_details: { cached_tokens: 1024, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 128 },
  },
};

const OPENAI_CHAT_STREAM_WITH_USAGE =
  chatChunk(
    '[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]',
    'null',
  ) +
  chatChunk(
    `[{"index":0,"delta":{"content":"${TRICKY_TEXT}"},"logprobs":null,"finish_reason":null}]`,
    'null',
  ) +
  chatChunk('[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]', 'null') +
  chatChunk(
    '[]',
    '{"prompt_tokens":20,"completion_tokens":9,"total_tokens":29,"prompt_tokens_details":{"cached_tokens":4,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}',
  ) +
  'data: [DONE]\n\n';

/** The same stream when the request did not set stream_options.include_usage: no usage field at all. */
const OPENAI_CHAT_STREAM_WITHOUT_USAGE =
  `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"${TRICKY_TEXT}"},"finish_reason":null}]}\n\n` +
  'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n' +
  'data: [DONE]\n\n';

const RESPONSE_USAGE =
  '{"input_tokens":328,"input_tokens_details":{"cached_tokens":256},"output_tokens":52,"output_tokens_details":{"reasoning_tokens":12},"total_tokens":380}';

const OPENAI_RESPONSES_JSON = {
  id: 'resp_1',
  object: 'response',
  status: 'completed',
  model: 'gpt-5-codex',
  output: [],
  usage: JSON.parse(RESPONSE_USAGE),
};

function responseEvent(type: string, body: string, withEventLine = true): string {
  return `${withEventLine ? `event: ${type}\n` : ''}data: {"type":"${type}","sequence_number":0,${body}}\n\n`;
}

function openAiResponsesStream(withEventLines = true): string {
  const response = (status: string, usage: string) =>
    `"response":{"id":"resp_1","object":"response","status":"${status}","model":"gpt-5-codex","output":[],"usage":${usage}}`;
  return (
    responseEvent('response.created', response('in_progress', 'null'), withEventLines) +
    responseEvent('response.in_progress', response('in_progress', 'null'), withEventLines) +
    responseEvent(
      'response.output_text.delta',
      `"item_id":"msg_1","output_index":0,"content_index":0,"delta":"${TRICKY_TEXT}"`,
      withEventLines,
    ) +
    responseEvent('response.completed', response('completed', RESPONSE_USAGE), withEventLines)
  );
}

const ANTHROPIC_JSON = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [{ type: 'text', text: 'hi' }],
  stop_reason: 'end_turn',
  usage: {
    input_tokens: 10,
    cache_creation_input_tokens: 200,
    cache_read_input_tokens: 3000,
    output_tokens: 40,
  },
};

function anthropicEvent(type: string, body: string): string {
  return `event: ${type}\ndata: {"type":"${type}"${body ? `,${body}` : ''}}\n\n`;
}

const ANTHROPIC_START = anthropicEvent(
  'message_start',
  '"message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":200,"cache_read_input_tokens":3000,"output_tokens":1}}',
);
const ANTHROPIC_BODY =
  anthropicEvent('content_block_start', '"index":0,"content_block":{"type":"text","text":""}') +
  anthropicEvent('ping', '') +
  anthropicEvent('content_block_delta', `"index":0,"delta":{"type":"text_delta","text":"${TRICKY_TEXT}"}`) +
  anthropicEvent('content_block_stop', '"index":0');

const ANTHROPIC_STREAM =
  ANTHROPIC_START +
  ANTHROPIC_BODY +
  anthropicEvent(
    'message_delta',
    '"delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}',
  ) +
  anthropicEvent(
    'message_delta',
    '"delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":40}',
  ) +
  anthropicEvent('message_stop', '');

/** Newer API versions repeat cumulative input/cache counts on message_delta (e.g. after server tools). */
const ANTHROPIC_STREAM_DELTA_WITH_INPUT =
  ANTHROPIC_START +
  ANTHROPIC_BODY +
  anthropicEvent(
    'message_delta',
    '"delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":25,"cache_creation_input_tokens":null,"cache_read_input_tokens":3100,"output_tokens":40}',
  ) +
  anthropicEvent('message_stop', '');

/** Cut off after the first text delta (caller disconnected): no message_delta. */
const ANTHROPIC_STREAM_CUT = ANTHROPIC_START + ANTHROPIC_BODY;

const GEMINI_JSON = {
  candidates: [{ content: { parts: [{ text: 'hi' }], role: 'model' }, finishReason: 'STOP', index: 0 }],
  usageMetadata: {
    promptTokenCount: 500,
    candidatesTokenCount: 60,
    totalTokenCount: 600,
    cachedContentTokenCount: 300,
    thoughtsTokenCount: 40,
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: 500 }],
  },
  modelVersion: 'gemini-2.5-flash',
  responseId: 'r1',
};

const GEMINI_CHUNKS = [
  `{"candidates":[{"content":{"parts":[{"text":"${TRICKY_TEXT}"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":500,"totalTokenCount":500,"promptTokensDetails":[{"modality":"TEXT","tokenCount":500}]},"modelVersion":"gemini-2.5-flash","responseId":"r1"}`,
  `{"candidates":[{"content":{"parts":[{"text":" more"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":500,"candidatesTokenCount":30,"totalTokenCount":530},"modelVersion":"gemini-2.5-flash","responseId":"r1"}`,
  `{"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":500,"candidatesTokenCount":60,"totalTokenCount":600,"cachedContentTokenCount":300,"thoughtsTokenCount":40},"modelVersion":"gemini-2.5-flash","responseId":"r1"}`,
];

/** `?alt=sse`: Gemini frames events with CRLF. */
const GEMINI_SSE = GEMINI_CHUNKS.map((chunk) => `data: ${chunk}\r\n\r\n`).join('');

/** Without alt=sse: one JSON array streamed element by element. */
const GEMINI_JSON_ARRAY = `[${GEMINI_CHUNKS.join(',\r\n')}]`;

/** A stream cut before the final chunk. */
const GEMINI_SSE_CUT = GEMINI_CHUNKS.slice(0, 2)
  .map((chunk) => `data: ${chunk}\r\n\r\n`)
  .join('');

// ---- helpers ----

const SSE = 'text/event-stream; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';
/** Whole body at once, byte by byte (splits every UTF-8 sequence and field name), and odd sizes. */
const SPLITS = [Number.POSITIVE_INFINITY, 1, 7, 61];

/** Feeds `text` to a fresh tap in pieces of `size` bytes. */
function tapResult(
  format: WireFormat,
  contentType: string,
  text: string,
  size = Number.POSITIVE_INFINITY,
): UsageResult {
  const tap = createUsageTap(format, contentType);
  const bytes = Buffer.from(text);
  const step = Number.isFinite(size) ? size : bytes.length;
  for (let i = 0; i < bytes.length; i += step) tap.write(bytes.subarray(i, i + step));
  return tap.end();
}

function assertEverySplit(
  format: WireFormat,
  contentType: string,
  text: string,
  expected: UsageResult,
): void {
  for (const size of SPLITS)
    assert.deepEqual(tapResult(format, contentType, text, size), expected, `chunk size ${size}`);
}

function assertMissing(result: UsageResult, reason: RegExp): void {
  assert.equal(result.usage, null);
  assert.match((result as { reason: string }).reason, reason);
}

// ---- OpenAI Chat Completions ----

describe('OpenAI chat completions usage', () => {
  const expectedJson: UsageResult = {
    usage: {
      inputTokens: 1200,
      outputTokens: 300,
      cacheReadTokens: 1024,
      cacheWriteTokens: 0,
      totalTokens: 1500,
      model: 'gpt-4o-2024-08-06',
    },
    partial: false,
  };

  it('reads a JSON body, directly and through the tap', () => {
    assert.deepEqual(openAiChatUsage.fromJson(OPENAI_CHAT_JSON), expectedJson);
    assertEverySplit('openai-chat', JSON_TYPE, JSON.stringify(OPENAI_CHAT_JSON), expectedJson);
  });

  it('reads the final usage chunk of a stream, however it is split', () => {
    assertEverySplit('openai-chat', SSE, OPENAI_CHAT_STREAM_WITH_USAGE, {
      usage: {
        inputTokens: 20,
        outputTokens: 9,
        cacheReadTokens: 4,
        cacheWriteTokens: 0,
        totalTokens: 29,
        model: 'gpt-4o-mini-2024-07-18',
      },
      partial: false,
    });
  });

  it('says why when a stream has no usage chunk (include_usage not set), despite usage-like text', () => {
    assertMissing(tapResult('openai-chat', SSE, OPENAI_CHAT_STREAM_WITHOUT_USAGE), /include_usage/);
  });

  it('reports missing or incomplete usage instead of zeros', () => {
    assertMissing(openAiChatUsage.fromJson({ ...OPENAI_CHAT_JSON, usage: undefined }), /no usage/);
    assertMissing(
      openAiChatUsage.fromJson({ ...OPENAI_CHAT_JSON, usage: { prompt_tokens: 3 } }),
      /completion_tokens/,
    );
    assertMissing(
      openAiChatUsage.fromJson({ ...OPENAI_CHAT_JSON, usage: { prompt_tokens: -1, completion_tokens: 2 } }),
      /prompt_tokens/,
    );
    assertMissing(
      tapResult('openai-chat', JSON_TYPE, JSON.stringify(OPENAI_CHAT_JSON).slice(0, 80)),
      /not valid JSON/,
    );
  });
});

// ---- OpenAI Responses ----

describe('OpenAI responses usage', () => {
  const expected: UsageResult = {
    usage: {
      inputTokens: 328,
      outputTokens: 52,
      cacheReadTokens: 256,
      cacheWriteTokens: 0,
      totalTokens: 380,
      model: 'gpt-5-codex',
    },
    partial: false,
  };

  it('reads a JSON body', () => {
    assert.deepEqual(openAiResponsesUsage.fromJson(OPENAI_RESPONSES_JSON), expected);
    assertEverySplit('openai-responses', JSON_TYPE, JSON.stringify(OPENAI_RESPONSES_JSON), expected);
  });

  it('reads response.completed from a stream, with or without event: lines', () => {
    assertEverySplit('openai-responses', SSE, openAiResponsesStream(true), expected);
    assertEverySplit('openai-responses', SSE, openAiResponsesStream(false), expected);
  });

  it('reports a stream cut before its terminal event', () => {
    const stream = openAiResponsesStream(true);
    const cut = stream.slice(0, stream.indexOf('event: response.completed'));
    assertMissing(tapResult('openai-responses', SSE, cut), /terminal response event/);
  });
});

// ---- Anthropic Messages ----

describe('Anthropic messages usage', () => {
  const expected: UsageResult = {
    // input_tokens excludes cache reads and writes: 10 + 200 + 3000.
    usage: {
      inputTokens: 3210,
      outputTokens: 40,
      cacheReadTokens: 3000,
      cacheWriteTokens: 200,
      totalTokens: 3250,
      model: 'claude-sonnet-4-5',
    },
    partial: false,
  };

  it('reads a JSON body including cache tokens', () => {
    assert.deepEqual(anthropicMessagesUsage.fromJson(ANTHROPIC_JSON), expected);
    assertEverySplit('anthropic-messages', JSON_TYPE, JSON.stringify(ANTHROPIC_JSON), expected);
  });

  it('combines message_start with the last message_delta, however the stream is split', () => {
    assertEverySplit('anthropic-messages', SSE, ANTHROPIC_STREAM, expected);
  });

  it('lets non-null cumulative input/cache counts on message_delta win', () => {
    assertEverySplit('anthropic-messages', SSE, ANTHROPIC_STREAM_DELTA_WITH_INPUT, {
      usage: {
        inputTokens: 3325,
        outputTokens: 40,
        cacheReadTokens: 3100,
        cacheWriteTokens: 200,
        totalTokens: 3365,
        model: 'claude-sonnet-4-5',
      },
      partial: false,
    });
  });

  it('marks a stream cut before message_delta as partial (a lower bound)', () => {
    assert.deepEqual(tapResult('anthropic-messages', SSE, ANTHROPIC_STREAM_CUT, 5), {
      usage: {
        inputTokens: 3210,
        outputTokens: 1,
        cacheReadTokens: 3000,
        cacheWriteTokens: 200,
        totalTokens: 3211,
        model: 'claude-sonnet-4-5',
      },
      partial: true,
    });
  });

  it('reports a stream without message_start', () => {
    assertMissing(
      tapResult('anthropic-messages', SSE, 'event: ping\ndata: {"type":"ping"}\n\n'),
      /message_start/,
    );
  });
});

// ---- Gemini ----

describe('Gemini usage', () => {
  const expected: UsageResult = {
    // Output includes thinking tokens: 60 + 40.
    usage: {
      inputTokens: 500,
      outputTokens: 100,
      cacheReadTokens: 300,
      cacheWriteTokens: 0,
      totalTokens: 600,
      model: 'gemini-2.5-flash',
    },
    partial: false,
  };

  it('reads a generateContent body', () => {
    assert.deepEqual(geminiUsage.fromJson(GEMINI_JSON), expected);
    assertEverySplit('gemini-generate', JSON_TYPE, JSON.stringify(GEMINI_JSON), expected);
  });

  it('reads the last usageMetadata of an alt=sse stream (CRLF framing)', () => {
    assertEverySplit('gemini-generate', SSE, GEMINI_SSE, expected);
  });

  it('reads the last element of the JSON-array streaming form', () => {
    assertEverySplit('gemini-generate', JSON_TYPE, GEMINI_JSON_ARRAY, expected);
  });

  it('marks a stream cut before the final chunk as partial', () => {
    assert.deepEqual(tapResult('gemini-generate', SSE, GEMINI_SSE_CUT, 3), {
      usage: {
        inputTokens: 500,
        outputTokens: 30,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        totalTokens: 530,
        model: 'gemini-2.5-flash',
      },
      partial: true,
    });
  });

  it('reports a body without usageMetadata', () => {
    assertMissing(geminiUsage.fromJson({ candidates: [] }), /usageMetadata/);
    assertMissing(geminiUsage.fromJson([{ candidates: [] }]), /usageMetadata/);
  });
});

// ---- the tap itself ----

describe('usage tap', () => {
  it('parses at most the usage-bearing events of a long stream, not every delta', () => {
    const delta = (i: number) =>
      `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"word ${i} "}}\n\n`;
    const stream = ANTHROPIC_STREAM.replace(
      'event: content_block_stop',
      Array.from({ length: 2000 }, (_, i) => delta(i)).join('') + 'event: content_block_stop',
    );
    const realParse = JSON.parse;
    let parses = 0;
    JSON.parse = ((text: string, reviver?: (key: string, value: unknown) => unknown) => {
      parses++;
      return realParse(text, reviver);
    }) as typeof JSON.parse;
    try {
      assert.equal(tapResult('anthropic-messages', SSE, stream, 512).usage?.outputTokens, 40);
    } finally {
      JSON.parse = realParse;
    }
    assert.ok(parses <= 2, `expected at most 2 JSON.parse calls, got ${parses}`);
  });

  it('reports responses whose content type carries no usage', () => {
    assertMissing(tapResult('openai-chat', 'text/html', '<html></html>'), /content-type "text\/html"/);
  });

  it('gives up, with a reason, on JSON bodies over the size cap', () => {
    const tap = createUsageTap('openai-chat', JSON_TYPE, { maxJsonBytes: 100 });
    tap.write(Buffer.from(JSON.stringify(OPENAI_CHAT_JSON)));
    assertMissing(tap.end(), /over 100 bytes/);
  });

  it('gives up, with a reason, on an SSE event over the size cap', () => {
    const tap = createUsageTap('anthropic-messages', SSE, { maxEventChars: 200 });
    tap.write(Buffer.from(`event: message_start\ndata: {"type":"message_start","pad":"${'x'.repeat(500)}`));
    tap.write(Buffer.from('"}\n\n'));
    assertMissing(tap.end(), /size limit/);
  });
});
