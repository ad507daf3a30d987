// The API of bench/body-bombs in a process of its own (so its RSS and event loop are the API's alone):
// a fresh database, an upload key, and the URL printed as one JSON line; serves until SIGTERM.
import { startStack } from '../support/stack.ts';

const BENCH_UPLOAD_KEY = 'bench-upload-key';

const stack = await startStack({ env: { SVC_UPLOAD_AUTH_KEY: BENCH_UPLOAD_KEY } });
console.log(JSON.stringify({ url: stack.url, pid: process.pid }));
const stop = () => void stack.close().finally(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
