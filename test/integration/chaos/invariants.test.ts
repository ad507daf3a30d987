// The chaos invariant checker catches each defect it is meant to catch: a planted loss, duplicate,
// reordering or double count each yields a violation, and the clean case yields none.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Ledger, type Observed, violations } from './invariants.ts';

function clean(): { ledger: Ledger; seen: Observed } {
  const ledger: Ledger = {
    chatsAcked: ['chaos-aaaaaaaa-00001', 'chaos-aaaaaaaa-00003'],
    chatsUnacked: ['chaos-aaaaaaaa-00002', 'chaos-aaaaaaaa-00004'],
    messagesAcked: new Map([
      ['m1', { tokens: 15, assistant: true }],
      ['m2', { tokens: 20, assistant: false }],
    ]),
    uploadAttempts: 3,
    uploadFailures: 1,
  };
  const seen: Observed = {
    // An unacknowledged chat may have been queued before the failure: delivered once is fine.
    echoed: ['chaos-aaaaaaaa-00001', 'chaos-aaaaaaaa-00002', 'chaos-aaaaaaaa-00003'],
    storedMessages: [
      { messageId: 'm1', tokens: 15, assistant: true },
      { messageId: 'm2', tokens: 20, assistant: false },
    ],
    quota: { tokens: 35, requests: 1 },
  };
  return { ledger, seen };
}

test('the clean outcome has no violation', () => {
  const { ledger, seen } = clean();
  assert.deepEqual(violations(ledger, seen), []);
});

const plants: [string, (l: Ledger, s: Observed) => void, RegExp][] = [
  ['an acknowledged chat lost', (_l, s) => s.echoed.splice(2, 1), /00003 reached the CLI 0 times/],
  [
    'an acknowledged chat delivered twice',
    (_l, s) => s.echoed.push('chaos-aaaaaaaa-00003'),
    /00003 reached the CLI 2 times/,
  ],
  [
    'an unacknowledged chat delivered twice',
    (_l, s) => s.echoed.splice(2, 0, 'chaos-aaaaaaaa-00002'),
    /unacknowledged chat chaos-aaaaaaaa-00002 reached the CLI 2 times/,
  ],
  ['chats out of order', (_l, s) => s.echoed.reverse(), /out of order/],
  ['a chat nobody sent', (_l, s) => s.echoed.push('chaos-aaaaaaaa-00009'), /never sent/],
  ['an acknowledged message lost', (_l, s) => s.storedMessages.pop(), /m2 is stored 0 times/],
  [
    'a message stored twice',
    (_l, s) => s.storedMessages.push({ messageId: 'm1', tokens: 15, assistant: true }),
    /m1 is stored 2 times/,
  ],
  [
    'a message stored that was never acknowledged',
    (_l, s) => s.storedMessages.push({ messageId: 'm9', tokens: 1, assistant: true }),
    /m9 is stored but was never acknowledged/,
  ],
  ['tokens double-counted', (_l, s) => (s.quota.tokens += 15), /quota counts 50 tokens/],
  ['requests double-counted', (_l, s) => (s.quota.requests += 1), /quota counts 2 requests/],
];

for (const [name, plant, expected] of plants)
  test(`a planted defect is caught: ${name}`, () => {
    const { ledger, seen } = clean();
    plant(ledger, seen);
    const found = violations(ledger, seen);
    assert.ok(
      found.some((v) => expected.test(v)),
      `expected ${expected} among ${JSON.stringify(found)}`,
    );
  });
