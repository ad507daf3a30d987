/**
 * OpenAI-format chat completions report usage in a stream only when the request sets
 * `stream_options.include_usage`; a client that does not ask would be metered with no tokens. So the
 * proxy asks for it on every streamed chat-completions call (addStreamUsageOption) and, when the
 * caller had not asked, takes out of the answer what asking added (UsageChunkFilter), so the caller
 * sees exactly the stream it requested:
 *   - the extra final chunk with empty `choices` and the `usage` object (read by the usage tap first);
 *   - the `"usage": null` member every other chunk then carries.
 * Non-streamed calls are not parsed: a body without the bytes `"stream"` is forwarded as it is.
 */
import { isRecord, parseJson } from '../usage/usage.ts';

export type StreamUsageRewrite =
  /** Forward the body as it came (not streamed, not JSON, or the caller asked for usage itself). */
  | { kind: 'unchanged'; streamed: boolean }
  /** Forward `body` instead; strip the added usage from the answer. */
  | { kind: 'rewritten'; body: Buffer };

const STREAM_KEY = Buffer.from('"stream"');

/** `known`: the body's parse when the caller already made one (undefined = not JSON); not changed. */
export function addStreamUsageOption(body: Buffer, known?: { parsed: unknown }): StreamUsageRewrite {
  if (body.indexOf(STREAM_KEY) === -1) return { kind: 'unchanged', streamed: false };
  // Not JSON: the provider will answer 400 itself.
  const parsed = known !== undefined ? known.parsed : parseJson(body.toString('utf8'));
  if (!isRecord(parsed) || parsed.stream !== true) return { kind: 'unchanged', streamed: false };
  const options = parsed.stream_options;
  if (isRecord(options) && options.include_usage === true) return { kind: 'unchanged', streamed: true };
  const rewritten = {
    ...parsed,
    stream_options: { ...(isRecord(options) ? options : {}), include_usage: true },
  };
  return { kind: 'rewritten', body: Buffer.from(JSON.stringify(rewritten)) };
}

/**
 * Removes what include_usage added from an OpenAI chat-completions SSE stream, event by event. Text
 * in, text out; events that carry no `"usage"` pass through byte for byte. Linear: each line is
 * looked at once.
 */
export class UsageChunkFilter {
  private pending = '';
  /** `pending` holds no newline before this index (so a long line is never scanned twice). */
  private scanned = 0;
  /** Lines of the event being read, with their line endings. */
  private event = '';
  /** An event outgrew MAX_EVENT_CHARS: everything from then on passes unfiltered. */
  private passThrough = false;

  /** Feeds decoded text; returns the text to pass on now. */
  push(text: string): string {
    if (this.passThrough) return text;
    this.pending += text;
    let out = '';
    let start = 0;
    for (;;) {
      const nl = this.pending.indexOf('\n', Math.max(start, this.scanned));
      if (nl === -1) break;
      const line = this.pending.slice(start, nl + 1);
      start = nl + 1;
      this.event += line;
      if (line === '\n' || line === '\r\n') {
        out += filterEvent(this.event);
        this.event = '';
      }
    }
    this.pending = this.pending.slice(start);
    this.scanned = this.pending.length;
    if (this.event.length + this.pending.length > MAX_EVENT_CHARS) {
      this.passThrough = true;
      return out + this.end();
    }
    return out;
  }

  /** The rest at the end of the stream (an unterminated last event passes unchanged). */
  end(): string {
    const rest = this.event + this.pending;
    this.event = '';
    this.pending = '';
    this.scanned = 0;
    return rest;
  }
}

/** Chat-completion chunks are small; a larger event is passed on without looking into it. */
const MAX_EVENT_CHARS = 1024 * 1024;

const DATA_PREFIX = 'data:';

/** One complete event (its lines and the blank line ending it) -> what the caller receives. */
function filterEvent(event: string): string {
  if (!event.includes('"usage"')) return event;
  // Chat-completion chunks are one `data:` line; anything else is left alone.
  const first = event.indexOf('\n');
  const cr = event.charCodeAt(first - 1) === 0x0d ? 1 : 0;
  const line = event.slice(0, first - cr);
  if (!line.startsWith(DATA_PREFIX) || event.length - first - 1 > 2) return event;
  let chunk: unknown;
  try {
    chunk = JSON.parse(line.slice(DATA_PREFIX.length));
  } catch {
    return event;
  }
  if (!isRecord(chunk) || !('usage' in chunk)) return event;
  if (Array.isArray(chunk.choices) && chunk.choices.length === 0 && isRecord(chunk.usage)) return '';
  if (chunk.usage !== null) return event;
  delete chunk.usage;
  const ending = event.slice(first - cr);
  return `${DATA_PREFIX} ${JSON.stringify(chunk)}${ending}`;
}
