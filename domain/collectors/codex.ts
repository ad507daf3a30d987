// Codex CLI transcripts, pure: `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<session-uuid>.jsonl`, one
// record {timestamp, type, payload} a line, type `session_meta` (payload.id, payload.cwd),
// `turn_context` (payload.model, payload.cwd), `response_item` or `event_msg`.
//
// Messages are `response_item` payloads of type `message` {role, content: [{type, text}], id?}; role
// `developer` is stored as `system`. A message's id is its payload id when present, else
// `<session-uuid>:<sha256 of its line>` (stable when the line is read again).
//
// Usage comes from `event_msg` payloads of type `token_count`: info.last_token_usage {input_tokens
// (cached ones included), cached_input_tokens, output_tokens (reasoning included),
// reasoning_output_tokens, total_tokens} is one model call. Pairing: a token_count belongs to the
// assistant message written since the previous token_count; a call that wrote no assistant message
// (only tool calls) carries its usage to the next assistant message, so every call is counted once
// and a turn's usage lands on its answer. token_count events without `info` (rate-limit updates) are
// ignored.
//
// A "unit" (an assistant message waiting for its token_count, or carried usage waiting for its
// message) is unfinished until closed; an unflushed read stops before the first line of an unfinished
// unit (see transcript.ts). A flushed read hands out the open message with what it has.
import { createHash } from 'node:crypto';
import {
  type CollectedMessage,
  contentText,
  type LineError,
  NO_USAGE,
  parseRecord,
  type ReadResult,
  recordTime,
  shortText,
  type TranscriptReader,
  tokenField,
  type Usage,
} from './transcript.ts';

export const CODEX_TOOL = 'codex';

const ROLES: Record<string, CollectedMessage['role']> = {
  user: 'user',
  assistant: 'assistant',
  developer: 'system',
  system: 'system',
};

const UUID_TAIL = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i;

/** The session uuid at the end of a rollout file name, if there is one. */
export function codexSessionIdOf(fileName: string): string | undefined {
  return UUID_TAIL.exec(fileName.slice(-80))?.[1]?.toLowerCase();
}

const add = (a: Usage, b: Usage): Usage => ({
  input: a.input + b.input,
  output: a.output + b.output,
  total: a.total + b.total,
});
const isZero = (u: Usage) => u.input === 0 && u.output === 0 && u.total === 0;

function usageOf(last: unknown): Usage {
  const input = tokenField(last, 'input_tokens');
  const output = tokenField(last, 'output_tokens');
  return { input, output, total: tokenField(last, 'total_tokens') || input + output };
}

interface Entry {
  message: CollectedMessage;
  start: number;
}

/** `sessionId`: the uuid from the file name (a session_meta record names it too). */
export function codexReader(opts: { sessionId: string }): TranscriptReader {
  const done: Entry[] = [];
  const errors: LineError[] = [];
  let sessionId = opts.sessionId;
  let model: string | null = null;
  let cwd: string | null = null;
  let open: { entry: Entry; usage: Usage } | undefined;
  let carried: Usage = NO_USAGE;
  /** First line of the unfinished unit, if one is open. */
  let unitStart: number | undefined;

  const fail = (offset: number, error: string) => errors.push({ offset, error });
  const settle = (entry: Entry, usage: Usage) => {
    entry.message.input_tokens = usage.input;
    entry.message.output_tokens = usage.output;
    entry.message.tokens_used = usage.total;
  };

  function onMessage(
    p: Record<string, unknown>,
    text: string,
    start: number,
    time: { date: string; timestamp: string },
  ) {
    const role = typeof p.role === 'string' ? ROLES[p.role] : undefined;
    if (role === undefined) return fail(start, 'message without a known role');
    const id =
      shortText(p.id, 255) ?? `${sessionId}:${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
    const entry: Entry = {
      start,
      message: {
        message_id: id,
        role,
        date: time.date,
        timestamp: time.timestamp,
        tool_name: CODEX_TOOL,
        content: contentText(p.content),
        model: role === 'assistant' ? model : null,
        input_tokens: 0,
        output_tokens: 0,
        tokens_used: 0,
        parent_id: null,
        conversation_id: sessionId,
        project_path: cwd,
        message_source: CODEX_TOOL,
      },
    };
    done.push(entry);
    if (role !== 'assistant') return;
    // Two answers before one token_count: the earlier one is closed without usage.
    open = { entry, usage: carried };
    carried = NO_USAGE;
    unitStart ??= start;
  }

  function onTokenCount(p: Record<string, unknown>, start: number) {
    const info = p.info;
    if (typeof info !== 'object' || info === null) return;
    const usage = usageOf((info as Record<string, unknown>).last_token_usage);
    if (open) {
      settle(open.entry, add(open.usage, usage));
      open = undefined;
      if (isZero(carried)) unitStart = undefined;
      return;
    }
    if (isZero(usage)) return;
    carried = add(carried, usage);
    unitStart ??= start;
  }

  return {
    line(text, start) {
      const r = parseRecord(text);
      if (typeof r === 'string') return fail(start, r);
      const p = r.payload;
      if (typeof r.type !== 'string' || typeof p !== 'object' || p === null || Array.isArray(p))
        return fail(start, 'record without type and payload');
      const payload = p as Record<string, unknown>;
      if (r.type === 'session_meta') {
        sessionId = shortText(payload.id, 100) ?? sessionId;
        cwd = shortText(payload.cwd, 500) ?? cwd;
      } else if (r.type === 'turn_context') {
        model = shortText(payload.model, 100) ?? model;
        cwd = shortText(payload.cwd, 500) ?? cwd;
      } else if (r.type === 'response_item' && payload.type === 'message') {
        const time = recordTime(r.timestamp);
        if (time === undefined) return fail(start, 'message record without a valid timestamp');
        onMessage(payload, text, start, time);
      } else if (r.type === 'event_msg' && payload.type === 'token_count') onTokenCount(payload, start);
    },

    finish({ flush, end }): ReadResult {
      if (flush) {
        if (open) settle(open.entry, add(open.usage, carried));
        else if (!isZero(carried)) {
          // Usage of calls that never wrote an answer: the last answer of this read takes it.
          const last = done.findLast((e) => e.message.role === 'assistant');
          if (last) {
            const m = last.message;
            settle(
              last,
              add({ input: m.input_tokens, output: m.output_tokens, total: m.tokens_used }, carried),
            );
          }
        }
      }
      const holdFrom = flush ? undefined : unitStart;
      const keep = (offset: number) => holdFrom === undefined || offset < holdFrom;
      return {
        messages: done.filter((e) => keep(e.start)).map((e) => e.message),
        errors: errors.filter((e) => keep(e.offset)),
        consumedTo: holdFrom ?? end,
      };
    },
  };
}
