// The messages bench/ingest uploads: deterministic (a seeded PRNG), with ~200 bytes of English-like
// content each (the full-text index tokenises it, so its shape matters), over 5 tools, 6 hosts and 40
// senders. Half the senders are tool accounts of users in two tenants (bench/ingest/run.ts creates
// them), the rest are unknown and land in tenant 1. Two mixes:
//   collector (default): what `npm run collect` sends: each block of BLOCK messages comes from one host
//     (hosts take turns), in time order, the whole run spanning `days`; a host has its own 8 senders.
//   random: every message on a random day, hour, tool, host and sender: about one aggregate key per
//     message, the worst case for the statistics UPSERTs.
import { mulberry32 } from '../support/random.ts';

export const TOOLS = ['claude-code', 'codex', 'gemini-cli', 'aider', 'copilot-cli'];
export const HOSTS = ['ws-01', 'ws-02', 'ws-03', 'build-01', 'laptop-ann', 'laptop-bo'];
/** Senders known as tool accounts: `dev-<i>@<tool>` for i < KNOWN_SENDERS; unknown beyond. */
export const KNOWN_SENDERS = 20;
const SENDERS = 40;
const WORDS = (
  'the a function returns value test file error fix refactor module import export type interface ' +
  'database query index migration schema request response handler route stream chunk buffer parse ' +
  'token usage quota tenant user session commit branch review merge build deploy config setting log'
).split(' ');

/** Every run uploads the same rows. */
const prng = mulberry32;

export interface BenchMessage {
  date: string;
  tool_name: string;
  host_name: string;
  message_id: string;
  role: 'user' | 'assistant';
  content: string;
  input_tokens: number;
  output_tokens: number;
  model: string | null;
  timestamp: string;
  sender_id: string;
  conversation_id: string;
}

export const senderAccount = (i: number) => `dev-${i}@bench`;

export type Mix = 'collector' | 'random';
/** Messages one collector run sends in a row (collector mix). */
export const BLOCK = 10_000;

/** Message `i` of a run of `total` (the same arguments always give the same message). */
export function makeMessages(
  from: number,
  count: number,
  opts: { total: number; days: number; mix: Mix },
): BenchMessage[] {
  const out: BenchMessage[] = [];
  const start = Date.UTC(2026, 0, 1);
  const span = opts.days * 86_400_000;
  for (let i = from; i < from + count; i++) {
    const r = prng(i + 1);
    const collector = opts.mix === 'collector';
    const block = Math.floor(i / BLOCK);
    const at = collector ? Math.floor((Math.min(i, opts.total) / opts.total) * span) : Math.floor(r() * span);
    const ts = new Date(start + at);
    const day = Math.floor(at / 86_400_000);
    const assistant = r() < 0.55;
    const words: string[] = [];
    let length = 0;
    while (length < 200) {
      const w = WORDS[Math.floor(r() * WORDS.length)]!;
      words.push(w);
      length += w.length + 1;
    }
    const hostIndex = collector ? block % HOSTS.length : Math.floor(r() * HOSTS.length);
    const sender = collector ? (hostIndex * 8 + Math.floor(r() * 8)) % SENDERS : Math.floor(r() * SENDERS);
    out.push({
      date: ts.toISOString().slice(0, 10),
      tool_name: TOOLS[Math.floor(r() * TOOLS.length)]!,
      host_name: HOSTS[hostIndex]!,
      message_id: `bench-${i}`,
      role: assistant ? 'assistant' : 'user',
      content: words.join(' '),
      input_tokens: assistant ? 200 + Math.floor(r() * 4000) : 0,
      output_tokens: assistant ? 50 + Math.floor(r() * 1500) : 0,
      model: assistant ? (r() < 0.7 ? 'claude-sonnet-4' : 'gpt-5') : null,
      timestamp: ts.toISOString(),
      sender_id: senderAccount(sender),
      conversation_id: `conv-${sender}-${day}`,
    });
  }
  return out;
}
