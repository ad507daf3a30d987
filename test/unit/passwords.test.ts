// The cost of new password hashes (domain/passwords.ts): the spec's 12 bcrypt rounds unless a test run
// lowers it with SVC_TEST_BCRYPT_ROUNDS (4 to 12); any other value stops the process at load. Each case
// loads the module in a fresh process with exactly that environment (npm test itself sets the variable).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';

const MODULE = path.resolve('domain/passwords.ts');

function hashWith(rounds: string | undefined) {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME } as Record<string, string>;
  if (rounds !== undefined) env.SVC_TEST_BCRYPT_ROUNDS = rounds;
  const script = `const p = await import(${JSON.stringify(MODULE)}); const h = await p.hashPassword('pw-1'); console.log(h.slice(0, 7), await p.verifyPassword('pw-1', h), await p.verifyPassword('pw-2', h));`;
  return spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    env,
    encoding: 'utf8',
  });
}

test('without SVC_TEST_BCRYPT_ROUNDS new hashes cost the spec’s 12 rounds', () => {
  const r = hashWith(undefined);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), '$2b$12$ true false');
});

test('a test run may lower the cost to 4; verification still checks the password', () => {
  const r = hashWith('4');
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), '$2b$04$ true false');
});

test('a cost outside 4 to 12, or not a number, stops the process at load', () => {
  for (const bad of ['3', '13', 'ten', '4.5']) {
    const r = hashWith(bad);
    assert.notEqual(r.status, 0, bad);
    assert.match(r.stderr, /SVC_TEST_BCRYPT_ROUNDS must be an integer from 4 to 12/);
  }
});
