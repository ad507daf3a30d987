// Password hashing (bcrypt, 12 rounds, as the spec requires). @node-rs/bcrypt runs on libuv's thread
// pool, so a login does not block the event loop for the ~250 ms a 12-round hash costs.
//
// `npm test` lowers the cost of new hashes with SVC_TEST_BCRYPT_ROUNDS (4, bcrypt's minimum), as
// Rails' has_secure_password does in its test environment: at 12 rounds the suite's logins and user
// creations were about a fifth of a CI run's CPU time. A stored hash carries its own cost, so
// verification follows whatever cost a hash was made with. The API warns at start when it is set
// (services/deps.ts); test/unit/passwords checks that the default is 12. The one setting read here
// rather than in config/: every layer hashes through this module, and none should have to pass a cost.
import { compare, hash } from '@node-rs/bcrypt';

export const BCRYPT_ROUNDS = 12;

/** The cost of new hashes: 12, or SVC_TEST_BCRYPT_ROUNDS (4 to 12) when a test run sets it. */
export const bcryptRounds: number = roundsFrom(process.env.SVC_TEST_BCRYPT_ROUNDS);

function roundsFrom(value: string | undefined): number {
  if (value === undefined || value === '') return BCRYPT_ROUNDS;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 4 || n > BCRYPT_ROUNDS)
    throw new Error(`SVC_TEST_BCRYPT_ROUNDS must be an integer from 4 to ${BCRYPT_ROUNDS}, not "${value}"`);
  return n;
}

export const hashPassword = (plain: string) => hash(plain, { cost: bcryptRounds });
export const verifyPassword = (plain: string, stored: string) => compare(plain, stored).catch(() => false);
