// Entry of the message-row writer thread (services/usage/message-writer-thread.ts): a worker thread does
// not inherit the parent's `--import tsx` loader, so it registers tsx itself, then loads the TypeScript
// module named in workerData.entry.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
