// The transcript sources a collection run reads, pure: their ids (also the tool_name of what they
// collect), which file names under their folders are transcripts, and the reader for a file.
import { CLAUDE_CODE_TOOL, claudeCodeReader } from './claude-code.ts';
import { CODEX_TOOL, codexReader, codexSessionIdOf } from './codex.ts';
import type { TranscriptReader } from './transcript.ts';

export const TRANSCRIPT_SOURCES = [CLAUDE_CODE_TOOL, CODEX_TOOL] as const;
export type TranscriptSource = (typeof TRANSCRIPT_SOURCES)[number];

/** The source of usage reports sent by remote agents (already stored; reported, not read). */
export const AGENT_REPORTS_SOURCE = 'agent_reports';

export const isTranscriptSource = (v: unknown): v is TranscriptSource =>
  (TRANSCRIPT_SOURCES as readonly unknown[]).includes(v);

/** Whether a file (its base name) is a transcript of the source. */
export function isTranscriptFile(source: TranscriptSource, baseName: string): boolean {
  if (!baseName.endsWith('.jsonl')) return false;
  return source === CODEX_TOOL ? baseName.startsWith('rollout-') : true;
}

/** A fresh reader for one read of one file. `fileKey` stands in for a session id the name lacks. */
export function readerFor(source: TranscriptSource, baseName: string, fileKey: string): TranscriptReader {
  if (source === CLAUDE_CODE_TOOL) return claudeCodeReader();
  return codexReader({ sessionId: codexSessionIdOf(baseName) ?? fileKey });
}

/** Splits bytes into complete lines (LF, an optional CR before it dropped); the tail without LF is left. */
export function completeLines(
  buf: Buffer,
  base: number,
): { lines: Array<{ text: string; start: number; end: number }>; consumed: number } {
  const lines: Array<{ text: string; start: number; end: number }> = [];
  let from = 0;
  for (;;) {
    const nl = buf.indexOf(10, from);
    if (nl < 0) break;
    const stop = nl > from && buf[nl - 1] === 13 ? nl - 1 : nl;
    if (stop > from)
      lines.push({ text: buf.toString('utf8', from, stop), start: base + from, end: base + nl + 1 });
    from = nl + 1;
  }
  return { lines, consumed: from };
}
