// Reads what is new in one transcript file since its remembered state (issue 10 item 3):
//   - no state: from byte 0;
//   - the file shrank below what was read, or its first min(4 KiB, old size) bytes no longer hash to
//     the remembered head: it was rewritten, read again from 0 (ingestion skips what it already has);
//   - otherwise from the remembered offset, in chunks, to the last complete line (a partial last line
//     is left for next time).
// The source's reader (domain/collectors/) turns the lines into messages and may stop before an
// unfinished response; the file is "settled" (its tail handed out as it is) once it has not been
// modified for `settleMs`. A malformed line becomes an error naming the file and its line number.
import { open } from 'node:fs/promises';
import path from 'node:path';
import type { FileError } from '../../domain/collectors/progress.ts';
import { completeLines, readerFor, type TranscriptSource } from '../../domain/collectors/sources.ts';
import type { CollectedMessage } from '../../domain/collectors/transcript.ts';
import { type FileState, HEAD_BYTES, headHashOf } from './file-state.ts';

const CHUNK_BYTES = 8 * 1024 * 1024;

export interface TranscriptRead {
  messages: CollectedMessage[];
  errors: FileError[];
  /** The state to remember once the messages are stored. */
  state: FileState;
  /** Bytes read this time (0: nothing new). */
  bytesRead: number;
  rewritten: boolean;
}

/** Line numbers (1-based) of the lines starting at `offsets`, counting newlines before each. */
async function lineNumbersAt(fh: import('node:fs/promises').FileHandle, offsets: number[]) {
  const sorted = [...new Set(offsets)].sort((a, b) => a - b);
  const out = new Map<number, number>();
  const buf = Buffer.alloc(1024 * 1024);
  let pos = 0;
  let lines = 1;
  for (const target of sorted) {
    while (pos < target) {
      const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, target - pos), pos);
      if (bytesRead === 0) break;
      for (let i = 0; i < bytesRead; i++) if (buf[i] === 10) lines++;
      pos += bytesRead;
    }
    out.set(target, lines);
  }
  return out;
}

export async function readTranscript(
  source: TranscriptSource,
  file: string,
  prior: FileState | undefined,
  opts: { now: Date; settleMs: number },
): Promise<TranscriptRead> {
  const fh = await open(file, 'r');
  try {
    const stat = await fh.stat();
    const size = stat.size;
    const head = Buffer.alloc(Math.min(HEAD_BYTES, size));
    if (head.length) await fh.read(head, 0, head.length, 0);
    const headHash = headHashOf(head);
    const rewritten =
      prior !== undefined &&
      (size < prior.byteOffset ||
        size < prior.size ||
        headHashOf(head.subarray(0, Math.min(HEAD_BYTES, prior.size))) !== prior.headHash);
    const from = prior === undefined || rewritten ? 0 : prior.byteOffset;
    if (from >= size)
      return {
        messages: [],
        errors: [],
        state: { byteOffset: from, size, headHash },
        bytesRead: 0,
        rewritten,
      };

    const reader = readerFor(source, path.basename(file), headHashOf(Buffer.from(file)).slice(0, 32));
    const buf = Buffer.alloc(Math.min(CHUNK_BYTES, size - from));
    let carry = Buffer.alloc(0);
    let pos = from;
    let end = from;
    while (pos < size) {
      const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, size - pos), pos);
      if (bytesRead === 0) break;
      const data = carry.length
        ? Buffer.concat([carry, buf.subarray(0, bytesRead)])
        : buf.subarray(0, bytesRead);
      const base = pos - carry.length;
      const { lines, consumed } = completeLines(data, base);
      for (const l of lines) reader.line(l.text, l.start, l.end);
      end = base + consumed;
      carry = Buffer.from(data.subarray(consumed));
      pos += bytesRead;
    }
    const flush = opts.settleMs === 0 || opts.now.getTime() - stat.mtime.getTime() >= opts.settleMs;
    const result = reader.finish({ flush, end });
    const numbers = result.errors.length
      ? await lineNumbersAt(
          fh,
          result.errors.map((e) => e.offset),
        )
      : new Map<number, number>();
    return {
      messages: result.messages,
      errors: result.errors.map((e) => ({ file, line: numbers.get(e.offset) ?? 0, error: e.error })),
      state: { byteOffset: result.consumedTo, size, headHash },
      bytesRead: end - from,
      rewritten,
    };
  } finally {
    await fh.close();
  }
}
