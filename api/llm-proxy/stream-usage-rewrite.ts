/**
 * The I/O half of domain/proxy/stream-usage-option.ts: reading a chat-completions request body whole
 * (it must be rewritten before it is sent), keeping request bodies for a usage estimate, and the
 * response transform that strips what include_usage added. Only chat-completions calls are read
 * whole; every other body is streamed through untouched.
 */
import type { IncomingMessage } from 'node:http';
import { Transform, type TransformCallback } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { UsageChunkFilter } from '../../domain/proxy/stream-usage-option.ts';
import { stringValueChars } from '../../domain/usage/estimate.ts';
import { parseJson } from '../../domain/usage/usage.ts';

/** The large JSON body limit (api/middleware/body.ts, 50 MB): the most a request body is held for. */
export const MAX_HELD_BODY_BYTES = 50 * 1024 * 1024;

export type HeldBody = { ok: true; body: Buffer } | { ok: false; reason: 'too_large' | 'aborted' };

/** Reads the whole request body, up to MAX_HELD_BODY_BYTES. */
export function readRequestBody(req: IncomingMessage): Promise<HeldBody> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (result: HeldBody) => {
      if (done) return;
      done = true;
      req.off('data', onData);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_HELD_BODY_BYTES) {
        chunks.length = 0;
        req.pause();
        finish({ ok: false, reason: 'too_large' });
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => finish({ ok: true, body: Buffer.concat(chunks, size) }));
    req.once('close', () => finish({ ok: false, reason: 'aborted' }));
  });
}

/**
 * Keeps references to a request body's chunks as they stream past (no copy), up to the body limit,
 * so that a stream ending without usage can still estimate its prompt (estimate.ts).
 */
export class RequestBodyKeeper {
  private chunks: Buffer[] = [];
  private size = 0;

  keep(chunk: Buffer): void {
    this.size += chunk.length;
    if (this.size <= MAX_HELD_BODY_BYTES) this.chunks.push(chunk);
    else this.chunks = [];
  }

  /** Characters of the body's JSON string values; a body that is not JSON (or too large) counts whole. */
  promptChars(): number {
    if (this.size > MAX_HELD_BODY_BYTES) return this.size;
    const text = Buffer.concat(this.chunks, this.size).toString('utf8');
    const body = parseJson(text);
    return body === undefined ? text.length : stringValueChars(body);
  }
}

/** Strips the include_usage additions from an SSE byte stream (UTF-8 kept intact across chunks). */
export function usageChunkStripper(): Transform {
  const decoder = new StringDecoder('utf8');
  const filter = new UsageChunkFilter();
  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      const out = filter.push(decoder.write(chunk));
      callback(null, out === '' ? undefined : out);
    },
    flush(callback: TransformCallback) {
      const out = filter.push(decoder.end()) + filter.end();
      callback(null, out === '' ? undefined : out);
    },
  });
}
