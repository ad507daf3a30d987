// Runs ONE bench/proxy path on its own, for profilers that attach to a process (perf, strace,
// node --cpu-prof): starts the mock provider (its own process) and the chosen path in this process,
// prints the URL and headers to load it with, and serves until Ctrl-C.
//
//   node --import tsx --cpu-prof bench/proxy/serve.ts proxy
//   npx autocannon -c 64 -d 10 -m POST -H 'content-type=application/json' -H 'authorization=Bearer <token>' \
//     -b '{"model":"m","messages":[]}' <url>

import { startPassthrough } from './passthrough.ts';
import { startApi, startForwarder, startMockProcess } from './run.ts';

const which = process.argv[2] ?? 'proxy';
const mock = await startMockProcess();
let url: string;
let authorization = 'Bearer caller';
let stop: () => Promise<void>;
if (which === 'direct') {
  url = `${mock.url}/v1/chat/completions`;
  stop = async () => undefined;
} else if (which === 'pass-through') {
  const s = await startPassthrough(`${mock.url}/v1`, 'sk-bench-real-key');
  url = `${s.url}/chat/completions`;
  stop = s.close;
} else if (which === 'forwarder') {
  const s = await startForwarder(`${mock.url}/v1`);
  url = `${s.url}/chat/completions`;
  stop = s.close;
} else {
  const api = await startApi(mock.url);
  url = `${api.url}/api/remote/llm-proxy/chat/completions`;
  authorization = `Bearer ${api.token}`;
  stop = api.close;
}
console.log(JSON.stringify({ path: which, pid: process.pid, url, authorization }));
const shutdown = () =>
  void stop().finally(() => {
    mock.stop();
    process.exit(0);
  });
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
