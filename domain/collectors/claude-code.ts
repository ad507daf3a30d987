// Claude Code transcripts, pure: `~/.claude/projects/<project-dir>/<session-uuid>.jsonl`, one JSON record
// a line. Records of type `user` and `assistant` carry {uuid, parentUuid, sessionId, timestamp, cwd,
// message: {role, content (string or blocks), model, id, usage}}; other types (summary, system,
// file-history-snapshot, ...) are not messages and are skipped.
//
// One API response is written as several `assistant` records (one per content block) that share one
// message.id and repeat its usage: they become ONE message (id = message.id, the blocks' text joined)
// whose usage is counted once (the largest value seen of each field, since a streaming record may
// carry a partial output count). Tokens: input = input_tokens + cache_creation_input_tokens +
// cache_read_input_tokens (every prompt token, as the model proxy counts Anthropic usage), output =
// output_tokens, tokens_used = input + output. A user record's id is its uuid.
//
// The last response of a read stays open (more of its blocks may still be written) unless a later
// record closed it or the read is flushed: see transcript.ts. Assistant records of model `<synthetic>`
// (notices Claude Code writes itself, no model call) are not messages.
import {
  type CollectedMessage,
  contentText,
  type LineError,
  parseRecord,
  type ReadResult,
  recordTime,
  shortText,
  type TranscriptReader,
  tokenField,
} from './transcript.ts';

export const CLAUDE_CODE_TOOL = 'claude_code';
const SYNTHETIC_MODEL = '<synthetic>';

interface Pending {
  message: CollectedMessage;
  /** Where the message's first line starts. */
  start: number;
  texts: string[];
}

function usageOf(usage: unknown) {
  return {
    input:
      tokenField(usage, 'input_tokens') +
      tokenField(usage, 'cache_creation_input_tokens') +
      tokenField(usage, 'cache_read_input_tokens'),
    output: tokenField(usage, 'output_tokens'),
  };
}

export function claudeCodeReader(): TranscriptReader {
  const done: Pending[] = [];
  const errors: LineError[] = [];
  const responses = new Map<string, Pending>();
  /** The response whose records may still continue (no other record came after it). */
  let open: Pending | undefined;

  const fail = (offset: number, error: string) => errors.push({ offset, error });

  return {
    line(text, start) {
      const r = parseRecord(text);
      if (typeof r === 'string') return fail(start, r);
      if (r.type !== 'user' && r.type !== 'assistant') return;
      const time = recordTime(r.timestamp);
      if (time === undefined) return fail(start, `${r.type} record without a valid timestamp`);
      const m = r.message;
      if (typeof m !== 'object' || m === null || Array.isArray(m))
        return fail(start, `${r.type} record without a message`);
      const msg = m as Record<string, unknown>;
      const uuid = shortText(r.uuid, 255);
      const common = {
        date: time.date,
        timestamp: time.timestamp,
        tool_name: CLAUDE_CODE_TOOL,
        parent_id: shortText(r.parentUuid, 255),
        conversation_id: shortText(r.sessionId, 255),
        project_path: shortText(r.cwd, 500),
        message_source: CLAUDE_CODE_TOOL,
      };
      if (r.type === 'user') {
        if (uuid === null) return fail(start, 'user record without a uuid');
        open = undefined;
        done.push({
          start,
          texts: [],
          message: {
            ...common,
            message_id: uuid,
            role: 'user',
            content: contentText(msg.content),
            model: null,
            input_tokens: 0,
            output_tokens: 0,
            tokens_used: 0,
          },
        });
        return;
      }
      // Claude Code's own notices (API errors, interruptions) are written as assistant records of
      // model `<synthetic>`: no model answered, so they are no request.
      if (msg.model === SYNTHETIC_MODEL) {
        open = undefined;
        return;
      }
      const id = shortText(msg.id, 255) ?? uuid;
      if (id === null) return fail(start, 'assistant record without message.id or uuid');
      const usage = usageOf(msg.usage);
      let p = responses.get(id);
      if (p === undefined) {
        p = {
          start,
          texts: [],
          message: {
            ...common,
            message_id: id,
            role: 'assistant',
            content: null,
            model: shortText(msg.model, 100),
            input_tokens: 0,
            output_tokens: 0,
            tokens_used: 0,
          },
        };
        responses.set(id, p);
        done.push(p);
      }
      const t = contentText(msg.content);
      if (t !== null) p.texts.push(t);
      p.message.input_tokens = Math.max(p.message.input_tokens, usage.input);
      p.message.output_tokens = Math.max(p.message.output_tokens, usage.output);
      p.message.model ??= shortText(msg.model, 100);
      open = p;
    },

    finish({ flush, end }): ReadResult {
      const holdFrom = !flush && open !== undefined ? open.start : undefined;
      const messages = done
        .filter((p) => holdFrom === undefined || p.start < holdFrom)
        .map((p) => {
          const m = p.message;
          if (m.role === 'assistant') m.content = p.texts.length ? p.texts.join('\n') : null;
          m.tokens_used = m.input_tokens + m.output_tokens;
          return m;
        });
      const kept = errors.filter((e) => holdFrom === undefined || e.offset < holdFrom);
      return { messages, errors: kept, consumedTo: holdFrom ?? end };
    },
  };
}
