// The benchmark's mock provider in its own process (its own event loop, as a real provider would be):
// prints its URL as one JSON line on stdout and serves until killed.
import { startSmallMock } from './mock-small.ts';

const mock = await startSmallMock();
process.stdout.write(`${JSON.stringify({ url: mock.url })}\n`);
process.on('SIGTERM', () => void mock.close().then(() => process.exit(0)));
