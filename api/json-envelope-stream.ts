// Reads a JSON request body of the shape `{key: value, ..., list: [row, row, ...], ...}` as it streams
// in, without ever holding the whole body: the upload routes (api/routes/upload-stream.ts) take bodies
// of up to 50 MB and hand rows to validation and ingestion in chunks while the rest is still arriving.
//
// Tokenising is stream-json's bare tokenizer (`jsonParser`, packed values only), fed text decoded with
// a StringDecoder so multi-byte characters split across network chunks stay whole; the values of the
// top-level object are rebuilt with stream-json's Assembler, one at a time. A top-level key named in
// `lists` whose value is an array is streamed element by element (`visitor.row`); any other top-level
// value is assembled whole and given to `visitor.field`.
//
// Backpressure: after each network chunk has been tokenised the reader awaits `visitor.drain()`; the
// body stream is not read while that promise is pending, so a slow database pauses the upload (TCP
// flow control) instead of filling memory. The body limit counts decoded bytes (after gzip/deflate).
import { StringDecoder } from 'node:string_decoder';
import { Assembler } from 'stream-json/assembler.js';
import { jsonParser } from 'stream-json/parser.js';

type Token = { name: string; value?: unknown };

export interface EnvelopeVisitor {
  /** A top-level value that is not a streamed list (also a list key whose value is not an array). */
  field(key: string, value: unknown): void;
  /** The value of list key `list` is an array: its rows follow. */
  listStart(list: string): void;
  /** One element of a streamed list. */
  row(list: string, value: unknown): void;
  /** Called after every network chunk: the place to store full chunks of rows. */
  drain(): Promise<void>;
}

/** The body is not JSON, or not a JSON object: `bytes` is how far the reader had got. */
export class MalformedBodyError extends Error {
  constructor(
    message: string,
    readonly bytes: number,
  ) {
    super(message);
  }
}

/** The body passed `limit` bytes. */
export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`body larger than ${limit} bytes`);
  }
}

/** stream-chain's `none` (a registered symbol): given to the tokenizer, it means "no more input". */
const END_OF_INPUT = Symbol.for('object-stream.none');

const SCALARS: Record<string, (v: unknown) => unknown> = {
  stringValue: (v) => v,
  numberValue: (v) => Number.parseFloat(v as string),
  nullValue: () => null,
  trueValue: () => true,
  falseValue: () => false,
};

/**
 * Streams `body` into `visitor`. Resolves when the top-level object has ended and the body is used up
 * (an empty body reads as `{}`); rejects with MalformedBodyError, BodyTooLargeError, or whatever the
 * visitor throws (the body is then left unread).
 */
export async function readJsonEnvelope(
  body: AsyncIterable<Buffer | string>,
  opts: { lists: ReadonlySet<string>; maxBytes: number },
  visitor: EnvelopeVisitor,
): Promise<void> {
  const tokenize = jsonParser({ packValues: true, streamValues: false }) as (
    text: string | symbol,
  ) => { values: Token[] } | symbol;
  const decoder = new StringDecoder('utf8');
  const asm = new Assembler();
  let bytes = 0;
  let level = 0; // 0 before the top-level object, 1 inside it, 2 inside a streamed list
  let key = '';
  let list = '';
  let assembling: 'field' | 'row' | undefined;
  let ended = false;
  let sawAnything = false;

  const consume = (t: Token) => {
    if (assembling !== undefined) {
      asm.consume(t as never);
      if (!asm.done) return;
      if (assembling === 'row') visitor.row(list, asm.current);
      else visitor.field(key, asm.current);
      assembling = undefined;
      return;
    }
    const name = t.name;
    if (level === 0) {
      if (name !== 'startObject') throw new MalformedBodyError('the body must be a JSON object', bytes);
      level = 1;
      return;
    }
    if (level === 1) {
      if (name === 'keyValue') key = t.value as string;
      else if (name === 'endObject') {
        level = 0;
        ended = true;
      } else if (name === 'startArray' && opts.lists.has(key)) {
        level = 2;
        list = key;
        visitor.listStart(list);
      } else if (name === 'startObject' || name === 'startArray') {
        assembling = 'field';
        asm.consume(t as never);
      } else visitor.field(key, SCALARS[name]!(t.value));
      return;
    }
    if (name === 'endArray') level = 1;
    else if (name === 'startObject' || name === 'startArray') {
      assembling = 'row';
      asm.consume(t as never);
    } else visitor.row(list, SCALARS[name]!(t.value));
  };

  const feed = (text: string | symbol) => {
    let out: { values: Token[] } | symbol;
    try {
      out = tokenize(text);
    } catch (e) {
      throw new MalformedBodyError((e as Error).message, bytes);
    }
    if (typeof out === 'symbol') return;
    for (const t of out.values) consume(t);
  };

  for await (const chunk of body) {
    bytes += chunk.length;
    if (bytes > opts.maxBytes) throw new BodyTooLargeError(opts.maxBytes);
    const text = typeof chunk === 'string' ? chunk : decoder.write(chunk);
    if (!sawAnything && text.trim() !== '') sawAnything = true;
    feed(text);
    await visitor.drain();
  }
  if (!sawAnything) return; // an empty body is `{}`, as the JSON body parser has it
  feed(decoder.end());
  feed(END_OF_INPUT);
  if (!ended) throw new MalformedBodyError('the body ended inside the JSON object', bytes);
}
