// Password hashing (bcrypt, 12 rounds, as the spec requires). @node-rs/bcrypt runs on libuv's thread
// pool, so a login does not block the event loop for the ~250 ms a 12-round hash costs.
import { compare, hash } from '@node-rs/bcrypt';

export const BCRYPT_ROUNDS = 12;
export const hashPassword = (plain: string) => hash(plain, { cost: BCRYPT_ROUNDS });
export const verifyPassword = (plain: string, stored: string) => compare(plain, stored).catch(() => false);
