/**
 * The mock provider must be faithful enough that the official SDKs work against it directly;
 * otherwise tests of the proxy through those SDKs would prove nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { MOCK_USAGE, type MockProvider, startMockProvider } from '../fixtures/mock-provider.ts';

describe('mock provider with the official SDKs', () => {
  let mock: MockProvider;
  let openai: OpenAI;
  let anthropic: Anthropic;

  before(async () => {
    mock = await startMockProvider({ textChunks: 4 });
    openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${mock.url}/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: 'sk-ant-test', baseURL: mock.url, maxRetries: 0 });
  });
  after(() => mock.close());

  it('openai: chat completion, non-streaming', async () => {
    const completion = await openai.chat.completions.create({
      model: 'gpt-x',
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.equal(completion.choices[0].message.content, 'tok0 tok1 tok2 tok3 ');
    assert.deepEqual(completion.usage, MOCK_USAGE.openaiChat);
    assert.equal(mock.requests.at(-1)?.headers.authorization, 'Bearer sk-test');
  });

  it('openai: chat completion stream with include_usage, through the accumulating helper', async () => {
    const stream = openai.chat.completions.stream({
      model: 'gpt-x',
      messages: [{ role: 'user', content: 'hi' }],
      stream_options: { include_usage: true },
    });
    const final = await stream.finalChatCompletion();
    assert.equal(final.choices[0].message.content, 'tok0 tok1 tok2 tok3 ');
    assert.deepEqual(final.usage, MOCK_USAGE.openaiChat);
  });

  it('openai: responses, non-streaming and streaming', async () => {
    const response = await openai.responses.create({ model: 'gpt-x', input: 'hi' });
    assert.equal(response.output_text, 'tok0 tok1 tok2 tok3 ');
    assert.deepEqual(response.usage, MOCK_USAGE.openaiResponses);

    const events: string[] = [];
    let usage: unknown;
    for await (const event of await openai.responses.create({ model: 'gpt-x', input: 'hi', stream: true })) {
      events.push(event.type);
      if (event.type === 'response.completed') usage = event.response.usage;
    }
    assert.equal(events.filter((type) => type === 'response.output_text.delta').length, 4);
    assert.deepEqual(usage, MOCK_USAGE.openaiResponses);
  });

  it('openai: models list', async () => {
    const models = await openai.models.list();
    assert.deepEqual(
      models.data.map((m) => m.id),
      ['mock-model'],
    );
  });

  it('anthropic: message, non-streaming and through the streaming helper', async () => {
    const message = await anthropic.messages.create({
      model: 'claude-x',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.deepEqual(message.usage, MOCK_USAGE.anthropic);
    // SDK versions differ in where they put the key (x-api-key, or Authorization: Bearer).
    const { headers } = mock.requests.at(-1)!;
    assert.ok([headers['x-api-key'], headers.authorization].some((value) => value?.includes('sk-ant-test')));

    const final = await anthropic.messages
      .stream({ model: 'claude-x', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
      .finalMessage();
    assert.equal(final.content[0].type === 'text' && final.content[0].text, 'tok0 tok1 tok2 tok3 ');
    assert.equal(final.usage.output_tokens, MOCK_USAGE.anthropic.output_tokens);
    assert.equal(final.usage.cache_read_input_tokens, MOCK_USAGE.anthropic.cache_read_input_tokens);
  });

  it('openai: an injected 429 surfaces as the SDK rate-limit error', async () => {
    mock.setBehaviour({ errorStatus: 429 });
    try {
      await assert.rejects(
        openai.chat.completions.create({ model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }] }),
        (error: unknown) => error instanceof OpenAI.RateLimitError && error.status === 429,
      );
    } finally {
      mock.setBehaviour({ errorStatus: undefined });
    }
  });

  it('records a client that disconnects mid-stream as aborted', async () => {
    mock.setBehaviour({ chunkDelayMs: 30, textChunks: 50 });
    try {
      const stream = await openai.chat.completions.create({
        model: 'gpt-x',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      });
      // Leaving the loop early makes the SDK abort the HTTP request.
      for await (const _chunk of stream) break;
      const record = await mock.waitForClosed(mock.requests.length - 1);
      assert.equal(record.aborted, true);
      assert.equal(record.finished, false);
      assert.ok(record.chunksSent < 50);
    } finally {
      mock.setBehaviour({ chunkDelayMs: 0, textChunks: 4 });
    }
  });
});
