// Shared seed of the analytics integration tests: a fixed "today" (2026-03-31, 12:00 UTC, set on the
// test clock before anyone logs in), the cast of every role in tenants A and B, and usage uploaded
// through POST /api/upload/batch with sender_name = a username, so each message lands in its user's
// tenant. The figures every test expects are derived here once (see EXPECTED).
//
//   tenant A, tool-a / host-1: alice 8 days (03-20..03-27) of one user + one assistant message at
//     10:00/10:01 UTC, assistant tokens 1000,1100,900,1000,1050,950,1000 then a planted spike of 50000
//     (60 % input); abe 5 days (03-27..03-31) of one assistant message of 200 tokens at 15:30, one
//     conversation spanning all five days.
//   tenant B, tool-b / host-2: bea 6 days (03-24..03-29), one assistant message of 300 tokens at 08:00.
//   tenant 1 (unknown sender): one message on 03-30 whose sender and tool start with '=' (CSV
//     formula-safety), 10 tokens.
import { randomUUID } from 'node:crypto';
import { buildCast, type Cast, createUser, uniqueName } from '../../support/actors.ts';
import type { TestApp } from '../../support/harness.ts';
import { api } from '../../support/session.ts';

export const TODAY = '2026-03-31';
export const EVIL_SENDER = '=HYPERLINK("http://x")';
export const EVIL_TOOL = '=cmd';
const ALICE_TOKENS = [1000, 1100, 900, 1000, 1050, 950, 1000, 50_000];

export const EXPECTED = {
  tenantA: { tokens: 58_000, requests: 13, messages: 21, input: 34_700, output: 23_300 },
  tenantB: { tokens: 1800, requests: 6, messages: 6 },
  tenant1: { tokens: 10 },
  all: { tokens: 59_810 },
  aliceTokens: 57_000,
  abeTokens: 1000,
} as const;

export interface Seeded {
  cast: Cast;
  alice: { id: number; username: string };
  abe: { id: number; username: string };
  bea: { id: number; username: string };
}

const day = (d: number) => `2026-03-${String(d).padStart(2, '0')}`;
const split = (tokens: number) => ({
  input_tokens: Math.round(tokens * 0.6),
  output_tokens: tokens - Math.round(tokens * 0.6),
});

export async function seedAnalytics(app: TestApp): Promise<Seeded> {
  app.clock.offsetMs = Date.parse(`${TODAY}T12:00:00Z`) - Date.now();
  const cast = await buildCast(app);
  const mk = async (tenant: number) => {
    const u = await createUser(app, cast.admin, {
      role: 'user',
      tenant_id: tenant,
      username: uniqueName('sender'),
    });
    return { id: u.id, username: u.username };
  };
  const alice = await mk(cast.tenantA);
  const abe = await mk(cast.tenantA);
  const bea = await mk(cast.tenantB);
  const messages: Record<string, unknown>[] = [];
  const base = (date: string, tool: string, host: string, sender: string) => ({
    message_id: randomUUID(),
    date,
    tool_name: tool,
    host_name: host,
    sender_name: sender,
  });
  ALICE_TOKENS.forEach((tokens, i) => {
    const date = day(20 + i);
    const conv = `conv-${alice.username}-${date}`;
    messages.push({
      ...base(date, 'tool-a', 'host-1', alice.username),
      role: 'user',
      content: 'question',
      input_tokens: 0,
      output_tokens: 0,
      timestamp: `${date}T10:00:00Z`,
      conversation_id: conv,
    });
    messages.push({
      ...base(date, 'tool-a', 'host-1', alice.username),
      role: 'assistant',
      content: 'answer',
      ...split(tokens),
      timestamp: `${date}T10:01:00Z`,
      conversation_id: conv,
    });
  });
  for (let d = 27; d <= 31; d++)
    messages.push({
      ...base(day(d), 'tool-a', 'host-1', abe.username),
      role: 'assistant',
      content: 'answer',
      input_tokens: 100,
      output_tokens: 100,
      timestamp: `${day(d)}T15:30:00Z`,
      conversation_id: `conv-${abe.username}`,
    });
  for (let d = 24; d <= 29; d++)
    messages.push({
      ...base(day(d), 'tool-b', 'host-2', bea.username),
      role: 'assistant',
      content: 'answer',
      input_tokens: 200,
      output_tokens: 100,
      timestamp: `${day(d)}T08:00:00Z`,
      conversation_id: `conv-${bea.username}`,
    });
  messages.push({
    ...base(day(30), EVIL_TOOL, 'host-9', EVIL_SENDER),
    role: 'assistant',
    content: 'answer',
    input_tokens: 5,
    output_tokens: 5,
    timestamp: `${day(30)}T20:00:00Z`,
  });
  const r = await api(app.url, 'POST', '/api/upload/batch', {
    body: { messages },
    headers: { 'x-upload-auth': 'test-upload-key' },
  });
  if (r.status !== 200) throw new Error(`seed upload: ${r.status} ${JSON.stringify(r.body)}`);
  return { cast, alice, abe, bea };
}
