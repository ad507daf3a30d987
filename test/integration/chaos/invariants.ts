// The invariant checker of the chaos tests: what the clients were told (the ledger) against what the
// system holds afterwards (observed). Pure, so its own test (invariants.test.ts) plants each defect.
//   - every acknowledged chat reached the CLI exactly once (its echo is in the output exactly once);
//   - no chat, acknowledged or not, reached it twice, and they arrived in the order they were sent;
//   - every acknowledged uploaded message is stored exactly once, and nothing else is stored;
//   - the user's quota counters equal the distinct acknowledged set (tokens, and one request per
//     assistant message): no double-counted usage.

export interface Ledger {
  /** Chat contents answered 2xx, in the order sent. */
  chatsAcked: string[];
  /** Chat contents whose POST failed (may or may not have been queued). */
  chatsUnacked: string[];
  /** Uploaded message ids answered 2xx, with what each must count. */
  messagesAcked: Map<string, { tokens: number; assistant: boolean }>;
  uploadAttempts: number;
  uploadFailures: number;
}

export interface Observed {
  /** Chat contents echoed by the CLI, in session output order. */
  echoed: string[];
  storedMessages: { messageId: string; tokens: number; assistant: boolean }[];
  quota: { tokens: number; requests: number };
}

export function violations(ledger: Ledger, seen: Observed): string[] {
  const out: string[] = [];
  const counts = new Map<string, number>();
  for (const c of seen.echoed) counts.set(c, (counts.get(c) ?? 0) + 1);
  for (const c of ledger.chatsAcked) {
    const n = counts.get(c) ?? 0;
    if (n !== 1) out.push(`acknowledged chat ${c} reached the CLI ${n} times`);
  }
  const sent = new Set([...ledger.chatsAcked, ...ledger.chatsUnacked]);
  for (const [c, n] of counts) {
    if (!sent.has(c)) out.push(`chat ${c} was never sent but reached the CLI`);
    else if (n > 1 && !ledger.chatsAcked.includes(c))
      out.push(`unacknowledged chat ${c} reached the CLI ${n} times`);
  }
  // Contents carry their sending order (zero-padded counter), so sorted order is sending order.
  for (let i = 1; i < seen.echoed.length; i++)
    if (seen.echoed[i]! <= seen.echoed[i - 1]!)
      out.push(`chat ${seen.echoed[i]} reached the CLI after ${seen.echoed[i - 1]} (out of order)`);

  const stored = new Map<string, number>();
  for (const m of seen.storedMessages) stored.set(m.messageId, (stored.get(m.messageId) ?? 0) + 1);
  for (const id of ledger.messagesAcked.keys()) {
    const n = stored.get(id) ?? 0;
    if (n !== 1) out.push(`acknowledged message ${id} is stored ${n} times`);
  }
  for (const id of stored.keys())
    if (!ledger.messagesAcked.has(id)) out.push(`message ${id} is stored but was never acknowledged`);
  let tokens = 0;
  let requests = 0;
  for (const m of ledger.messagesAcked.values()) {
    tokens += m.tokens;
    if (m.assistant) requests++;
  }
  if (seen.quota.tokens !== tokens)
    out.push(`quota counts ${seen.quota.tokens} tokens, the acknowledged messages ${tokens}`);
  if (seen.quota.requests !== requests)
    out.push(`quota counts ${seen.quota.requests} requests, the acknowledged messages ${requests}`);
  return out;
}
