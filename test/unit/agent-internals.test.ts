import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LineSplitter } from '../../agent/lines.ts';
import { Logger, redact } from '../../agent/log.ts';
import { Outbox } from '../../agent/outbox.ts';
import type { OutputEvent } from '../../agent/protocol.ts';

const output = (seq: number, data = 'x'): OutputEvent => ({
  type: 'output',
  session_id: 's',
  run_id: 'r',
  seq,
  stream: 'stdout',
  data,
  timestamp: '',
});

describe('agent line splitter', () => {
  it('joins chunks, keeps multi-byte characters whole, drops CR and empty lines', () => {
    const lines: string[] = [];
    const s = new LineSplitter((l) => lines.push(l));
    const bytes = Buffer.from('héllo\r\n\nwörld\npartial');
    for (let i = 0; i < bytes.length; i++) s.push(bytes.subarray(i, i + 1));
    assert.deepEqual(lines, ['héllo', 'wörld']);
    s.end();
    assert.deepEqual(lines, ['héllo', 'wörld', 'partial']);
  });

  it('cuts a runaway line', () => {
    const got: Array<[number, boolean]> = [];
    const s = new LineSplitter((l, t) => got.push([l.length, t]), 10);
    s.push('a'.repeat(25));
    assert.deepEqual(got, [[10, true]]);
  });
});

describe('agent outbox', () => {
  it('returns failed batches to the front, keeping order', () => {
    const o = new Outbox();
    o.push(output(1));
    o.push(output(2));
    const batch = o.take();
    o.push(output(3));
    o.requeue(batch);
    assert.deepEqual(
      o.take().map((e) => (e as OutputEvent).seq),
      [1, 2, 3],
    );
  });

  it('bounds batches by count and size but always sends at least one event', () => {
    const o = new Outbox();
    for (let i = 1; i <= 10; i++) o.push(output(i, 'y'.repeat(1000)));
    assert.equal(o.take(3).length, 3);
    assert.equal(o.take(100, 2500).length, 2);
    o.push(output(99, 'z'.repeat(10000)));
    assert.ok(o.take(100, 100).length >= 1);
  });

  it('drops the oldest output first when full, never responses', () => {
    const o = new Outbox(2);
    o.push({ type: 'response', command_id: 'c', payload: {} });
    o.push(output(1));
    o.push(output(2));
    assert.equal(o.dropped, 1);
    assert.deepEqual(
      o.take().map((e) => e.type),
      ['response', 'output'],
    );
  });
});

describe('agent log', () => {
  it('redacts secret-looking fields and filters by level', () => {
    const lines: string[] = [];
    const log = new Logger('INFO', (l) => lines.push(l));
    log.debug('hidden');
    log.info('shown', {
      agent_token: 'abc',
      proxy_token: 'def',
      authorization: 'Bearer x',
      session_id: 's1',
    });
    assert.equal(lines.length, 1);
    const rec = JSON.parse(lines[0]!);
    assert.equal(rec.agent_token, '[redacted]');
    assert.equal(rec.proxy_token, '[redacted]');
    assert.equal(rec.authorization, '[redacted]');
    assert.equal(rec.session_id, 's1');
    assert.deepEqual(redact({ api_key: 1 }), { api_key: '[redacted]' });
  });
});
