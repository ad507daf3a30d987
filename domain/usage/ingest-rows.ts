// Validation of uploaded usage rows, pure (spec document 2, "Upload, fetch and reports" and the
// daily_messages data model). A request is an envelope (checked with zod by the route: a bad envelope
// is a 400 for the whole request) holding rows; every row is judged on its own, so one bad row never
// hides the good ones. A rejected row carries its index in the request and the field at fault.
//
// Field names are the data model's. Counts are non-negative integers (numbers, or strings of digits
// as the spec allows for uploads); dates are calendar dates `YYYY-MM-DD`, timestamps any ISO 8601
// date and time (see parseTimestamp: local time is read as UTC). No regular expression here can
// backtrack: each is a fixed-shape anchor.

export const MESSAGE_ROLES = ['user', 'assistant', 'system'] as const;
export type MessageRole = (typeof MESSAGE_ROLES)[number];

export const DEFAULT_HOST_NAME = 'localhost';

/** A message as stored in daily_messages (user_id is resolved later, from the sender). */
export interface MessageRow {
  date: string;
  toolName: string;
  hostName: string;
  messageId: string;
  parentId: string | null;
  role: MessageRole;
  content: string | null;
  fullEntry: string | null;
  tokensUsed: number;
  inputTokens: number;
  outputTokens: number;
  model: string | null;
  timestamp: Date | null;
  senderId: string | null;
  senderName: string | null;
  messageSource: string | null;
  conversationId: string | null;
  agentSessionId: string | null;
  projectPath: string | null;
}

export interface RowError {
  /** Position of the row in its list of the request. */
  index: number;
  field: string;
  error: string;
}

export type RowResult<T> = { ok: true; row: T } | { ok: false; error: Omit<RowError, 'index'> };

/** Defaults a message row takes from its envelope (`/api/upload/messages`). */
export interface MessageDefaults {
  date?: string;
  toolName?: string;
  hostName?: string;
}

const DATE_SHAPE = /^\d{4}-\d{2}-\d{2}$/;
const DIGITS = /^\d{1,16}$/;
// ISO 8601 date and time, extended (`2026-03-01T10:15:30.123456+01:00`) or basic
// (`20260301T101530Z`) format; `T`, `t` or the RFC 3339 space between date and time; seconds and a
// fraction (`.` or `,`, any number of digits, kept to the millisecond) optional; then `Z`, an offset
// (`+hh:mm`, `+hhmm`, `+hh`) or nothing. Fixed widths: linear.
const EXTENDED_TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;
const BASIC_TIMESTAMP =
  /^(\d{4})(\d{2})(\d{2})[Tt](\d{2})(\d{2})(?:(\d{2})(?:[.,](\d{1,9}))?)?(Z|z|[+-]\d{2}(?:\d{2})?)?$/;

/** A real calendar date in `YYYY-MM-DD`. */
export function isCalendarDate(value: unknown): value is string {
  if (typeof value !== 'string' || !DATE_SHAPE.test(value)) return false;
  const d = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === value;
}

/**
 * An ISO 8601 timestamp as a Date; undefined when it is not one. A time without a zone (what Python's
 * `datetime.isoformat()` writes for a naive datetime) is local time of an unknown place: it is read as
 * UTC, the one rule for every upload (docs/administrators/usage-analytics-and-roi.md "Reading usage"). `24:00:00` is the end of its day; a
 * leap second (`:60`) counts as the last millisecond of its minute.
 */
export function parseTimestamp(value: unknown): Date | undefined {
  if (typeof value !== 'string' || value.length > 40) return undefined;
  const m = EXTENDED_TIMESTAMP.exec(value) ?? BASIC_TIMESTAMP.exec(value);
  if (!m) return undefined;
  const [year, month, day, hour, minute] = [m[1], m[2], m[3], m[4], m[5]].map(Number) as number[];
  const second = m[6] === undefined ? 0 : Number(m[6]);
  const millis = m[7] === undefined ? 0 : Math.floor(Number(`0.${m[7]}`) * 1000);
  if (!isCalendarDate(`${m[1]}-${m[2]}-${m[3]}`)) return undefined;
  const endOfDay = hour === 24 && minute === 0 && second === 0 && millis === 0;
  if ((hour! > 23 && !endOfDay) || minute! > 59 || second > 60) return undefined;
  let offsetMinutes = 0;
  const zone = m[8];
  if (zone !== undefined && zone !== 'Z' && zone !== 'z') {
    const digits = zone.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = (zone[0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const utc =
    Date.UTC(year!, month! - 1, day!, hour!, minute!, Math.min(second, 59), second === 60 ? 999 : millis) -
    offsetMinutes * 60_000;
  const d = new Date(utc);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

class FieldError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The largest count one uploaded row may carry (10^12 tokens or requests). Rows are summed into
 * daily, tenant and all-time figures: without a bound, a few rows near 2^53 make those sums exceed
 * Number.MAX_SAFE_INTEGER and every answer that holds them imprecise (found by `npm run fuzz`).
 */
export const MAX_UPLOAD_COUNT = 1_000_000_000_000;

/** A non-negative integer count (number or digit string), at most MAX_UPLOAD_COUNT; `fallback` when absent. */
export function count(obj: Record<string, unknown>, field: string, fallback: number): number {
  const v = obj[field];
  if (v === undefined || v === null) return fallback;
  let n: number;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'string' && DIGITS.test(v)) n = Number(v);
  else throw new FieldError(field, 'must be a non-negative integer');
  if (!Number.isSafeInteger(n)) throw new FieldError(field, 'must be a non-negative integer');
  if (n < 0) throw new FieldError(field, 'must not be negative');
  if (n > MAX_UPLOAD_COUNT) throw new FieldError(field, `must be at most ${MAX_UPLOAD_COUNT}`);
  return n;
}

/** An optional string of at most `max` characters; null when absent or empty. */
export function text(obj: Record<string, unknown>, field: string, max?: number): string | null {
  const v = obj[field];
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'string') throw new FieldError(field, 'must be a string');
  if (max !== undefined && v.length > max) throw new FieldError(field, `must be at most ${max} characters`);
  return v;
}

/** A required non-empty string of at most `max` characters. */
export function required(obj: Record<string, unknown>, field: string, max: number): string {
  const v = text(obj, field, max);
  if (v === null) throw new FieldError(field, 'is required');
  return v;
}

function optionalDate(obj: Record<string, unknown>, field: string): string | undefined {
  const v = obj[field];
  if (v === undefined || v === null || v === '') return undefined;
  if (!isCalendarDate(v)) throw new FieldError(field, 'must be a date YYYY-MM-DD');
  return v;
}

/** Judges one row with `read`, turning the first field error into a row error. */
export function judgeRow<T>(value: unknown, read: (obj: Record<string, unknown>) => T): RowResult<T> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { ok: false, error: { field: '', error: 'must be an object' } };
  try {
    return { ok: true, row: read(value as Record<string, unknown>) };
  } catch (e) {
    if (e instanceof FieldError) return { ok: false, error: { field: e.field, error: e.message } };
    throw e;
  }
}

/**
 * One message. Its own `date`, `tool_name`, `host_name` win over the envelope's; without a date the
 * UTC day of its timestamp is used. `tokens_used` defaults to input + output.
 */
export function readMessage(value: unknown, defaults: MessageDefaults = {}): RowResult<MessageRow> {
  return judgeRow(value, (m) => {
    const messageId = required(m, 'message_id', 255);
    const roleText = required(m, 'role', 20);
    if (!(MESSAGE_ROLES as readonly string[]).includes(roleText))
      throw new FieldError('role', `must be one of ${MESSAGE_ROLES.join(', ')}`);
    let timestamp: Date | null = null;
    if (m.timestamp !== undefined && m.timestamp !== null && m.timestamp !== '') {
      const t = parseTimestamp(m.timestamp);
      if (t === undefined) throw new FieldError('timestamp', 'must be an ISO 8601 timestamp');
      timestamp = t;
    }
    const date = optionalDate(m, 'date') ?? defaults.date ?? timestamp?.toISOString().slice(0, 10);
    if (date === undefined) throw new FieldError('date', 'is required (or a timestamp)');
    const toolName = text(m, 'tool_name', 100) ?? defaults.toolName;
    if (toolName === undefined) throw new FieldError('tool_name', 'is required');
    const hostName = text(m, 'host_name', 255) ?? defaults.hostName ?? DEFAULT_HOST_NAME;
    const inputTokens = count(m, 'input_tokens', 0);
    const outputTokens = count(m, 'output_tokens', 0);
    const tokensUsed = count(m, 'tokens_used', inputTokens + outputTokens);
    let fullEntry: string | null;
    if (m.full_entry !== null && typeof m.full_entry === 'object') fullEntry = JSON.stringify(m.full_entry);
    else fullEntry = text(m, 'full_entry');
    return {
      date,
      toolName,
      hostName,
      messageId,
      parentId: text(m, 'parent_id', 255),
      role: roleText as MessageRole,
      content: text(m, 'content'),
      fullEntry,
      tokensUsed,
      inputTokens,
      outputTokens,
      model: text(m, 'model', 100),
      timestamp,
      senderId: text(m, 'sender_id', 255),
      senderName: text(m, 'sender_name', 255),
      messageSource: text(m, 'message_source', 50),
      conversationId: text(m, 'conversation_id', 255),
      agentSessionId: text(m, 'agent_session_id', 64),
      projectPath: text(m, 'project_path', 500),
    };
  });
}

/** Splits rows into the valid ones (with their indexes) and the rejected ones. */
export function judgeRows<T>(
  values: readonly unknown[],
  read: (value: unknown) => RowResult<T>,
): { valid: Array<{ index: number; row: T }>; rejected: RowError[] } {
  const valid: Array<{ index: number; row: T }> = [];
  const rejected: RowError[] = [];
  values.forEach((value, index) => {
    const r = read(value);
    if (r.ok) valid.push({ index, row: r.row });
    else rejected.push({ index, ...r.error });
  });
  return { valid, rejected };
}

/** The natural key of daily_messages: unique (date, tool_name, message_id, host_name). */
export const messageKey = (m: Pick<MessageRow, 'date' | 'toolName' | 'messageId' | 'hostName'>) =>
  `${m.date}\u0000${m.toolName}\u0000${m.messageId}\u0000${m.hostName}`;

/** A day's usage report of a tool on a host (`/api/upload/usage`), as stored in usage_uploads. */
export interface UsageRow {
  date: string;
  toolName: string;
  hostName: string;
  tokensUsed: number;
  inputTokens: number;
  outputTokens: number;
  cacheTokens: number;
  requestCount: number;
  /** Comma-separated model names, as daily_usage.models_used. */
  modelsUsed: string | null;
}

/** One usage report. `tokens_used` defaults to input + output; `request_count` to 0. */
export function readUsage(value: unknown): RowResult<UsageRow> {
  return judgeRow(value, (u) => {
    const date = optionalDate(u, 'date');
    if (date === undefined) throw new FieldError('date', 'is required');
    const inputTokens = count(u, 'input_tokens', 0);
    const outputTokens = count(u, 'output_tokens', 0);
    return {
      date,
      toolName: required(u, 'tool_name', 100),
      hostName: text(u, 'host_name', 255) ?? DEFAULT_HOST_NAME,
      tokensUsed: count(u, 'tokens_used', inputTokens + outputTokens),
      inputTokens,
      outputTokens,
      cacheTokens: count(u, 'cache_tokens', 0),
      requestCount: count(u, 'request_count', 0),
      modelsUsed: text(u, 'models_used', 1000),
    };
  });
}

/** The model names of a models_used list. */
export const modelsOf = (modelsUsed: string | null): string[] =>
  modelsUsed === null
    ? []
    : [
        ...new Set(
          modelsUsed
            .split(',')
            .map((m) => m.trim())
            .filter((m) => m !== ''),
        ),
      ];
