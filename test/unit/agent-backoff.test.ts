import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Backoff, backoffDelayMs, sleep } from '../../agent/backoff.ts';

describe('agent backoff', () => {
  it('stays within [base, max] for every attempt and random value', () => {
    for (let attempt = 0; attempt < 40; attempt++) {
      for (const r of [0, 0.001, 0.5, 0.999, 1]) {
        const d = backoffDelayMs(attempt, 1000, 60000, () => r);
        assert.ok(d >= 1000 && d <= 60000, `attempt ${attempt} r ${r} -> ${d}`);
      }
    }
  });

  it('widens the window exponentially until it reaches max', () => {
    const top = (attempt: number) => backoffDelayMs(attempt, 1000, 60000, () => 1);
    assert.equal(top(0), 2000);
    assert.equal(top(1), 4000);
    assert.equal(top(2), 8000);
    assert.equal(top(4), 32000);
    assert.equal(top(5), 60000);
    assert.equal(top(30), 60000);
    assert.equal(
      backoffDelayMs(3, 1000, 60000, () => 0),
      1000,
      'lower bound is always base',
    );
  });

  it('jitters: different random draws give different delays, spread over the window', () => {
    const delays = Array.from({ length: 200 }, () => backoffDelayMs(3, 1000, 60000));
    assert.ok(new Set(delays).size > 150, 'delays are not all equal');
    const min = Math.min(...delays);
    const max = Math.max(...delays);
    assert.ok(min >= 1000 && max <= 16000);
    assert.ok(max - min > 7000, `spread ${max - min} should cover most of [1000, 16000]`);
  });

  it('Backoff.next grows and reset() starts over', () => {
    const b = new Backoff(100, 1000, () => 1);
    assert.deepEqual([b.next(), b.next(), b.next(), b.next(), b.next()], [200, 400, 800, 1000, 1000]);
    b.reset();
    assert.equal(b.next(), 200);
  });

  it('never overflows on a very long outage', () => {
    const b = new Backoff(1000, 60000, () => 1);
    for (let i = 0; i < 10000; i++) b.next();
    assert.equal(b.next(), 60000);
  });

  it('sleep resolves early when its signal aborts', async () => {
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 20);
    await sleep(10000, controller.signal);
    assert.ok(Date.now() - started < 1000);
  });
});
