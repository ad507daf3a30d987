// Entry of the message-row writer thread (services/usage/message-writer-thread.ts): a worker thread does
// not inherit the parent's `--import tsx` loader, so it registers tsx itself, then loads the TypeScript
// module named in workerData.entry. An entry already in JavaScript (the bundle `npm test` builds of it,
// test/support/bundle-tests.ts) needs no loader.
import { workerData } from 'node:worker_threads';

if (/\.[cm]?tsx?$/.test(new URL(workerData.entry).pathname)) {
  const { register } = await import('tsx/esm/api');
  register();
}
await import(workerData.entry);
