/**
 * A usage tap sits beside a response as it streams through the proxy: it is fed the raw body chunks
 * (write) and, when the body is over, reports the usage (end). It never alters or holds up the bytes.
 *
 * - text/event-stream: SSE events are split incrementally (eventsource-parser) and handed to the
 *   format's collector, which keeps only the few usage-bearing events and parses them once at the end.
 * - JSON: the chunks are kept (references, not copies) and parsed once at the end, up to a size cap.
 */
import { createParser, type EventSourceParser } from 'eventsource-parser';
import type { StreamUsageCollector, WireFormatUsage } from './stream-collector.ts';
import { parseJson, type UsageResult, usageMissing } from './usage.ts';
import { WIRE_FORMAT_USAGE } from './wire-format.ts';
import type { WireFormat } from './wire-format-name.ts';

export interface UsageTap {
  write(chunk: Uint8Array): void;
  end(): UsageResult;
}

export interface UsageTapOptions {
  /** Largest JSON body kept for parsing, in bytes. Model responses are far below the default. */
  maxJsonBytes?: number;
  /** Largest single SSE event buffered, in characters. */
  maxEventChars?: number;
}

const DEFAULT_MAX_JSON_BYTES = 16 * 1024 * 1024;
const DEFAULT_MAX_EVENT_CHARS = 16 * 1024 * 1024;
const UTF8 = new TextDecoder();

export function createUsageTap(
  format: WireFormat,
  contentType: string | undefined,
  options: UsageTapOptions = {},
): UsageTap {
  const reader = WIRE_FORMAT_USAGE[format];
  const type = (contentType ?? '').toLowerCase();
  if (type.includes('text/event-stream')) {
    return new SseUsageTap(reader, options.maxEventChars ?? DEFAULT_MAX_EVENT_CHARS);
  }
  if (type.includes('json')) return new JsonUsageTap(reader, options.maxJsonBytes ?? DEFAULT_MAX_JSON_BYTES);
  return noUsageTap(`response content-type "${type || 'none'}" carries no readable usage`);
}

/** A tap for responses that are known to carry no usage. */
export function noUsageTap(reason: string): UsageTap {
  return { write() {}, end: () => usageMissing(reason) };
}

class SseUsageTap implements UsageTap {
  private readonly decoder = new TextDecoder();
  private readonly parser: EventSourceParser;
  private readonly collector: StreamUsageCollector;
  private failure: string | undefined;
  /** Generated text seen so far, for an estimate if the stream ends without usage. */
  private outputChars = 0;

  constructor(reader: WireFormatUsage, maxEventChars: number) {
    const collector = reader.streamCollector();
    this.collector = collector;
    this.parser = createParser({
      maxBufferSize: maxEventChars,
      onEvent: (event) => {
        collector.onEvent(event.event, event.data);
        this.outputChars += reader.outputChars(event.event, event.data);
      },
      onError: (error) => {
        if (error.type === 'max-buffer-size-exceeded') this.failure = 'an SSE event exceeded the size limit';
      },
    });
  }

  write(chunk: Uint8Array): void {
    if (this.failure !== undefined) return;
    // stream: true keeps a UTF-8 sequence split across chunks intact.
    this.parser.feed(this.decoder.decode(chunk, { stream: true }));
  }

  end(): UsageResult {
    if (this.failure === undefined) this.parser.feed(this.decoder.decode());
    if (this.failure !== undefined) return usageMissing(this.failure);
    const result = this.collector.result();
    if (result.usage === null) result.outputChars = this.outputChars;
    return result;
  }
}

class JsonUsageTap implements UsageTap {
  private chunks: Uint8Array[] = [];
  private size = 0;

  constructor(
    private readonly reader: WireFormatUsage,
    private readonly maxBytes: number,
  ) {}

  write(chunk: Uint8Array): void {
    this.size += chunk.length;
    if (this.size > this.maxBytes) this.chunks = [];
    else this.chunks.push(chunk);
  }

  end(): UsageResult {
    if (this.size > this.maxBytes)
      return usageMissing(`response body over ${this.maxBytes} bytes; usage not read`);
    // One chunk is the common case for small replies: decode it without copying.
    const bytes = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.size);
    const body = parseJson(UTF8.decode(bytes));
    this.chunks = [];
    if (body === undefined) return usageMissing('response body is not valid JSON (cut short?)');
    return this.reader.fromJson(body);
  }
}
