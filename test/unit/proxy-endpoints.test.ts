// The proxy's path normalisation and endpoint allow-list (domain/proxy), the include_usage rewrite and
// its stripping, the tokenizer-free estimate, and linear behaviour on adversarial input (results are
// asserted, not timings: a super-linear scan of these inputs would not finish within the test timeout).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KEY_PROVIDERS } from '../../domain/key-providers.ts';
import { endpointTable, matchBareEndpoint, matchEndpoint } from '../../domain/proxy/endpoints.ts';
import { formatProxyPath, normaliseProxyPath } from '../../domain/proxy/request-path.ts';
import { addStreamUsageOption, UsageChunkFilter } from '../../domain/proxy/stream-usage-option.ts';
import { estimatedUsage, jsonStringValueChars, stringValueChars } from '../../domain/usage/estimate.ts';
import { sniffEventType } from '../../domain/usage/usage.ts';
import { detectWireFormat } from '../../domain/usage/wire-format.ts';

const segments = (raw: string) => {
  const r = normaliseProxyPath(raw);
  assert.ok(r.ok, `${raw}: ${r.ok ? '' : r.message}`);
  return r.path.segments;
};
const refusal = (raw: string) => {
  const r = normaliseProxyPath(raw);
  assert.ok(!r.ok, `${raw} must be refused`);
  return r.message;
};

describe('normaliseProxyPath', () => {
  it('decodes once and keeps the query as sent', () => {
    assert.deepEqual(segments('/v1/chat/completion%73'), ['v1', 'chat', 'completions']);
    assert.deepEqual(segments('/v1beta/models/g-1.5%3AgenerateContent?alt=sse'), [
      'v1beta',
      'models',
      'g-1.5:generateContent',
    ]);
    const r = normaliseProxyPath('/v1/models?a=%2F&key=x');
    assert.ok(r.ok);
    assert.equal(r.path.query, 'a=%2F&key=x');
    assert.equal(formatProxyPath(r.path), '/v1/models?a=%2F&key=x');
    assert.deepEqual(segments(''), []);
    assert.deepEqual(segments('/'), []);
    assert.deepEqual(segments('?x=1'), []);
  });

  it('refuses encoded slashes, backslashes, dot segments, ; and # tricks, double slashes', () => {
    const cases: Record<string, string> = {
      '/v1/chat%2Fcompletions': 'Path must not contain encoded "/", "?" or "%"',
      '/v1/chat%2fcompletions': 'Path must not contain encoded "/", "?" or "%"',
      '/v1/x%3F/chat': 'Path must not contain encoded "/", "?" or "%"',
      '/v1/%252e%252e/x': 'Path must not contain encoded "/", "?" or "%"',
      '/v1\\chat/completions': 'Path must not contain "\\", ";" or "#"',
      '/v1/chat%5Ccompletions': 'Path must not contain "\\", ";" or "#"',
      '/v1/chat/completions;x=1': 'Path must not contain "\\", ";" or "#"',
      '/v1/chat/completions%3B': 'Path must not contain "\\", ";" or "#"',
      '/v1/chat/completions#frag': 'Path must not contain "\\", ";" or "#"',
      '/v1/chat/completions%23': 'Path must not contain "\\", ";" or "#"',
      '/v1/models?x=1#y': 'Path must not contain "#"',
      '/v1/../v1/chat/completions': 'Path must not contain dot segments',
      '/v1/./chat/completions': 'Path must not contain dot segments',
      '/v1/%2e%2e/chat/completions': 'Path must not contain dot segments',
      '/v1/.%2E/chat/completions': 'Path must not contain dot segments',
      '/v1/%2e/chat/completions': 'Path must not contain dot segments',
      '/v1//chat/completions': 'Path must not contain empty segments ("//" or a trailing "/")',
      '//v1/chat/completions': 'Path must not contain empty segments ("//" or a trailing "/")',
      '/v1/chat/completions/': 'Path must not contain empty segments ("//" or a trailing "/")',
      '/v1/chat/completions%': 'Path has malformed percent-encoding',
      '/v1/chat/completions%4': 'Path has malformed percent-encoding',
      '/v1/chat/%zzcompletions': 'Path has malformed percent-encoding',
      '/v1/chat/completions%00': 'Path must contain printable ASCII only',
      '/v1/chat/compl%C3%A9tions': 'Path must contain printable ASCII only',
      '/v1/chat/compl\u00e9tions': 'Path must contain printable ASCII only',
      'v1/chat': 'Path must start with "/"',
    };
    for (const [raw, message] of Object.entries(cases)) assert.equal(refusal(raw), message, raw);
  });
});

describe('matchEndpoint', () => {
  const match = (provider: 'openai' | 'anthropic' | 'gemini', method: string, raw: string) => {
    const m = matchEndpoint(provider, method, segments(raw));
    return m.kind === 'unknown' ? 'unknown' : `${m.kind}:${m.endpoint.pattern}`;
  };

  it('matches exactly, case-sensitively, with an optional version segment', () => {
    assert.equal(match('openai', 'POST', '/v1/chat/completions'), 'allowed:/chat/completions');
    assert.equal(match('openai', 'POST', '/chat/completions'), 'allowed:/chat/completions');
    assert.equal(match('openai', 'POST', '/v1/chat/completion%73'), 'allowed:/chat/completions');
    assert.equal(match('openai', 'POST', '/v1/chat/Completions'), 'unknown');
    assert.equal(match('openai', 'POST', '/V1/chat/completions'), 'unknown');
    assert.equal(match('openai', 'POST', '/v1/v1/chat/completions'), 'unknown');
    assert.equal(match('openai', 'POST', '/v1/foo/chat/completions'), 'unknown');
    assert.equal(match('openai', 'GET', '/v1/chat/completions'), 'unknown');
    assert.equal(match('openai', 'POST', '/v1/embeddings'), 'allowed:/embeddings');
    assert.equal(match('openai', 'POST', '/v1/images/generations'), 'unknown');
    assert.equal(match('openai', 'GET', '/v1/models/ft:gpt-4o:org:x'), 'allowed:/models/{model}');
    assert.equal(match('anthropic', 'POST', '/v1/messages/count_tokens'), 'allowed:/messages/count_tokens');
    assert.equal(match('anthropic', 'POST', '/v1/complete'), 'unknown');
  });

  it('refuses batch and file endpoints with every method', () => {
    for (const method of ['GET', 'POST', 'DELETE']) {
      assert.equal(match('openai', method, '/v1/batches'), 'refused:/batches/**');
      assert.equal(match('openai', method, '/v1/batches/batch_1/cancel'), 'refused:/batches/**');
      assert.equal(match('openai', method, '/v1/files'), 'refused:/files/**');
      assert.equal(match('anthropic', method, '/v1/messages/batches'), 'refused:/messages/batches/**');
      assert.equal(
        match('gemini', method, '/v1beta/models/g:batchGenerateContent'),
        'refused:/models/{model}:batchGenerateContent',
      );
    }
  });

  it('matches Gemini model segments by segment, with a safe model name', () => {
    assert.equal(
      match('gemini', 'POST', '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse'),
      'allowed:/models/{model}:streamGenerateContent',
    );
    assert.equal(
      match('gemini', 'POST', '/v1/models/gemini-2.5-flash:countTokens'),
      'allowed:/models/{model}:countTokens',
    );
    for (const bad of [
      '/v1beta/models/:generateContent',
      '/v1beta/models/a:b:generateContent',
      '/v1beta/models/a$b:generateContent',
      '/v1beta/models/gemini:generatecontent',
      `/v1beta/models/${'a'.repeat(129)}:generateContent`,
      '/v1beta/models/g:generateContentX',
      '/v1beta/tunedModels/g:generateContent',
    ])
      assert.equal(match('gemini', 'POST', bad), 'unknown', bad);
  });

  it('finds the bare endpoint in the base URL path, gateway prefix allowed', () => {
    const bare = (p: string) => {
      const m = matchBareEndpoint('openai', p);
      return m.kind === 'unknown' ? 'unknown' : `${m.kind}:${m.endpoint.pattern}`;
    };
    assert.equal(bare('/v1/chat/completions'), 'allowed:/chat/completions');
    assert.equal(bare('/gw/openai/v1/responses'), 'allowed:/responses');
    assert.equal(bare('/v1'), 'unknown');
    assert.equal(bare('/v1/batches'), 'refused:/batches/**');
  });

  it('every rule of the table matches its own documented pattern', () => {
    for (const provider of KEY_PROVIDERS) {
      for (const rule of endpointTable(provider)) {
        const path = rule.pattern.replace('{model}', 'm-1').replace('/**', '');
        const m = matchEndpoint(provider, rule.method === '*' ? 'POST' : rule.method, segments(path));
        assert.notEqual(m.kind, 'unknown', `${provider} ${rule.pattern}`);
        assert.equal(m.kind === 'refused', rule.metering.kind === 'refused');
      }
    }
  });
});

describe('include_usage rewrite', () => {
  it('adds include_usage to streamed bodies only', () => {
    const plain = Buffer.from('{"model":"m","messages":[]}');
    assert.deepEqual(addStreamUsageOption(plain), { kind: 'unchanged', streamed: false });
    assert.deepEqual(addStreamUsageOption(Buffer.from('{"stream":false}')), {
      kind: 'unchanged',
      streamed: false,
    });
    assert.deepEqual(
      addStreamUsageOption(Buffer.from('{"stream":true,"stream_options":{"include_usage":true}}')),
      {
        kind: 'unchanged',
        streamed: true,
      },
    );
    assert.deepEqual(addStreamUsageOption(Buffer.from('{"stream": tru')), {
      kind: 'unchanged',
      streamed: false,
    });
    const r = addStreamUsageOption(Buffer.from('{"model":"m","stream":true,"stream_options":{"x":1}}'));
    assert.equal(r.kind, 'rewritten');
    assert.deepEqual(JSON.parse((r as { body: Buffer }).body.toString()), {
      model: 'm',
      stream: true,
      stream_options: { x: 1, include_usage: true },
    });
  });

  it('strips the usage-only chunk and "usage": null, byte for byte otherwise, across any split', () => {
    const chunk = (choices: string, usage: string) =>
      `data: {"id":"c","object":"chat.completion.chunk","choices":${choices},"usage":${usage}}\n\n`;
    const stream =
      ': keep-alive\n\n' +
      chunk('[{"index":0,"delta":{"content":"h\u00e9 \\"usage\\": {}"}}]', 'null') +
      'event: other\ndata: {"usage":null}\n\n' +
      chunk('[]', '{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}') +
      'data: [DONE]\n\n';
    const expected =
      ': keep-alive\n\n' +
      'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"h\u00e9 \\"usage\\": {}"}}]}\n\n' +
      'event: other\ndata: {"usage":null}\n\n' +
      'data: [DONE]\n\n';
    for (const size of [1, 3, 7, 1000]) {
      const filter = new UsageChunkFilter();
      let out = '';
      for (let i = 0; i < stream.length; i += size) out += filter.push(stream.slice(i, i + size));
      out += filter.end();
      assert.equal(out, expected, `split every ${size}`);
    }
    const crlf = new UsageChunkFilter();
    assert.equal(crlf.push('data: {"choices":[],"usage":null}\r\n\r\n'), 'data: {"choices":[]}\r\n\r\n');
  });
});

describe('tokenizer-free estimate', () => {
  it('ceil(chars / 4) on both sides, marked estimated', () => {
    assert.deepEqual(estimatedUsage(9, 4), {
      inputTokens: 3,
      outputTokens: 1,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      totalTokens: 4,
      estimated: true,
    });
    assert.equal(
      jsonStringValueChars('{"delta":{"content":"ab\\"c\\u00e9"},"x":{"content": "d"}}', ['content']),
      6,
    );
    assert.equal(jsonStringValueChars('{"content":null,"content":{"content":"xy"}}', ['content']), 2);
    assert.equal(stringValueChars({ model: 'm', messages: [{ role: 'user', content: 'hello' }], n: 1 }), 10);
  });
});

describe('linear on adversarial input (issue 8 item 9)', () => {
  it('slash runs, long paths and many segments are refused, not scanned quadratically', () => {
    const slashes = `${'/'.repeat(200_000)}x`;
    assert.equal(detectWireFormat('openai', slashes), null);
    assert.equal(detectWireFormat('openai', `/v1/chat/completions${'/'.repeat(200_000)}`), null);
    assert.equal(refusal(`/${'a/'.repeat(1100)}b`), 'Path is too long');
    assert.equal(refusal(`/${'a/'.repeat(20)}b`), 'Path has too many segments');
    assert.equal(detectWireFormat('gemini', `/v1beta/models/${'%3A'.repeat(50_000)}generateContent`), null);
  });

  it('usage and estimate scans stay linear on pathological provider output', () => {
    const keys = '"content"'.repeat(200_000);
    assert.equal(jsonStringValueChars(keys, ['content']), 0);
    const colons = '"content" :  x'.repeat(200_000);
    assert.equal(jsonStringValueChars(colons, ['content']), 0);
    const escapes = `{"content":"${'\\\\'.repeat(200_000)}`;
    assert.equal(jsonStringValueChars(escapes, ['content']), 200_000);
    assert.equal(sniffEventType(`{"type":"${'x'.repeat(500_000)}`), undefined);
    const filter = new UsageChunkFilter();
    const line = `data: ${'"usage"'.repeat(300_000)}`;
    let out = '';
    for (let i = 0; i < line.length; i += 1000) out += filter.push(line.slice(i, i + 1000));
    out += filter.end();
    assert.equal(out, line);
  });
});
