// What a transcript reader produces, pure (issue 10 item 3). A reader is fed the complete lines of a
// JSONL transcript in order, each with its byte range in the file, and at the end says which
// messages are final and up to which byte the file is consumed.
//
// "Final" matters because transcripts are read while the CLI may still be writing them: a Claude Code
// response is written as several records sharing one message.id (one per content block), and a Codex
// response's usage arrives on a later `token_count` line. A message is only handed out once all of its
// lines are there; the lines of an unfinished one are left unconsumed and read again next time
// (`consumedTo` stops before them). `flush` (the file has been idle long enough, or a one-off read)
// hands out what there is.
//
// Messages come out in the upload wire shape (docs/integrators/uploads.md "Uploading usage and messages"), so the server's
// collector and `npm run collect` feed the same validation (readMessage) and the same ingestion.

/** A message in the upload shape; `host_name` and `sender_name` are added by whoever collects. */
export interface CollectedMessage {
  message_id: string;
  role: 'user' | 'assistant' | 'system';
  date: string;
  timestamp: string;
  tool_name: string;
  content: string | null;
  model: string | null;
  input_tokens: number;
  output_tokens: number;
  tokens_used: number;
  parent_id: string | null;
  conversation_id: string | null;
  project_path: string | null;
  message_source: string;
}

/** A line that could not be read; `offset` is where the line starts in the file. */
export interface LineError {
  offset: number;
  error: string;
}

export interface ReadResult {
  messages: CollectedMessage[];
  errors: LineError[];
  /** Bytes of the file consumed: the next read starts here. */
  consumedTo: number;
}

export interface TranscriptReader {
  /** One complete line (without its newline) spanning bytes [start, end) of the file. */
  line(text: string, start: number, end: number): void;
  /** `end`: the end of the last complete line fed. */
  finish(opts: { flush: boolean; end: number }): ReadResult;
}

/** Token counts of one model response. */
export interface Usage {
  input: number;
  output: number;
  total: number;
}

export const NO_USAGE: Usage = { input: 0, output: 0, total: 0 };

/** A non-negative integer field, else 0 (transcripts are not ours to reject for a missing count). */
export function tokenField(obj: unknown, key: string): number {
  if (typeof obj !== 'object' || obj === null) return 0;
  const v = (obj as Record<string, unknown>)[key];
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : 0;
}

/** A non-empty string of at most `max` characters, else null. */
export function shortText(v: unknown, max: number): string | null {
  return typeof v === 'string' && v !== '' && v.length <= max ? v : null;
}

/** JSON.parse of one line as an object; a string saying why not otherwise. */
export function parseRecord(text: string): Record<string, unknown> | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'not valid JSON';
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object';
  return value as Record<string, unknown>;
}

/** The record's ISO 8601 timestamp, normalised, and its UTC day; undefined when absent or invalid. */
export function recordTime(v: unknown): { timestamp: string; date: string } | undefined {
  if (typeof v !== 'string' || v.length > 40) return undefined;
  const t = Date.parse(v);
  if (Number.isNaN(t)) return undefined;
  const timestamp = new Date(t).toISOString();
  return { timestamp, date: timestamp.slice(0, 10) };
}

/** The text of message content: a string, or the text parts of a block list (tools named). */
export function contentText(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return null;
  const parts: string[] = [];
  for (const block of content) {
    if (typeof block === 'string') parts.push(block);
    if (typeof block !== 'object' || block === null) continue;
    const b = block as Record<string, unknown>;
    if (typeof b.text === 'string') parts.push(b.text);
    else if (b.type === 'tool_use' && typeof b.name === 'string') parts.push(`[tool_use: ${b.name}]`);
    else if (b.type === 'tool_result') parts.push(contentText(b.content) ?? '[tool_result]');
  }
  return parts.length ? parts.join('\n') : null;
}
