#!/usr/bin/env node
// Benchmark CLI speaking the stream-json protocol of the agent's cli_alpha adapter. For every user
// line on stdin it prints one assistant line stamped with when it read the line (`received_at`) and
// when it printed the answer (`printed_at`), then a `result` line. Times are epoch milliseconds with
// sub-millisecond precision (performance.timeOrigin + performance.now()), comparable across processes.
import { createInterface } from 'node:readline';

const now = () => performance.timeOrigin + performance.now();
// STAMP_DELAY_MS: wait this long before answering (bench/remote --cli-delay), as a real CLI would.
const delayMs = Number(process.env.STAMP_DELAY_MS) || 0;
const out = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');
out({ type: 'system', subtype: 'init', session_id: `bench-${process.pid}` });
for await (const line of createInterface({ input: process.stdin })) {
  const receivedAt = now();
  let content = '';
  try {
    const msg = JSON.parse(line);
    content = typeof msg?.message?.content === 'string' ? msg.message.content : '';
  } catch {
    continue;
  }
  if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
  out({ type: 'assistant', bench: content, received_at: receivedAt, printed_at: now() });
  out({ type: 'result', subtype: 'success' });
}
