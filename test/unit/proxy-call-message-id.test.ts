// The message id of a proxied call's assistant row (services/usage/remote-messages.ts callMessageId):
// unique within a process even when many calls share a millisecond or the clock steps back (a repeat
// would be dropped as a duplicate by ON CONFLICT DO NOTHING, losing the row), time-ordered, and ending
// in the process's random suffix (what keeps two API instances apart).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { callMessageId } from '../../services/usage/remote-messages.ts';

test('ids are unique and ordered within a millisecond, across milliseconds and when the clock steps back', () => {
  const t = Date.now() + 1_000_000;
  const times = [t, t, t, t + 1, t + 1, t - 5_000, t - 5_000, t + 2];
  const ids = times.map((ms) => callMessageId(ms));
  assert.equal(new Set(ids).size, ids.length, `repeated: ${ids.join(' ')}`);
  assert.deepEqual(
    [...ids].sort(),
    ids,
    'time-ordered (the stepped-back calls count on the last millisecond)',
  );
  const suffixes = new Set(ids.map((id) => id.split('-')[2]));
  assert.equal(suffixes.size, 1, 'one random suffix per process');
  assert.match([...suffixes][0]!, /^[0-9a-f]{16}$/);
});
