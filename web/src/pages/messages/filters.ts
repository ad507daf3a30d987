// The messages page's filters, pure (test/unit/web-messages-filters.test.ts): read from the address
// query (so a search is a link), written back to it and to GET /api/messages' parameters, with the
// page offset; and the conversation a message belongs to (its agent session, else its conversation id,
// as the API groups them), and a conversation's last-message label.
import { formatTime } from '../../ui/format.ts';

export interface MessageFilters {
  search: string;
  start_date: string;
  end_date: string;
  tool: string;
  host: string;
  sender: string;
  role: '' | 'user' | 'assistant';
}

export const EMPTY_FILTERS: MessageFilters = {
  search: '',
  start_date: '',
  end_date: '',
  tool: '',
  host: '',
  sender: '',
  role: '',
};

export const PAGE_SIZE = 50;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const KEYS = Object.keys(EMPTY_FILTERS) as (keyof MessageFilters)[];

/** Filters and offset from the address query; anything malformed is dropped, never sent. */
export function filtersFromQuery(q: Record<string, string | undefined>): {
  filters: MessageFilters;
  offset: number;
} {
  const f: MessageFilters = { ...EMPTY_FILTERS };
  for (const k of KEYS) {
    const v = (q[k] ?? '').trim();
    if (!v) continue;
    if ((k === 'start_date' || k === 'end_date') && !DATE.test(v)) continue;
    if (k === 'role') {
      if (v === 'user' || v === 'assistant') f.role = v;
      continue;
    }
    f[k] = v.slice(0, k === 'search' ? 500 : 255);
  }
  const n = Number(q.offset);
  const offset = Number.isInteger(n) && n > 0 ? Math.floor(n / PAGE_SIZE) * PAGE_SIZE : 0;
  return { filters: f, offset };
}

/** Only the set filters (and a non-zero offset), as query parameters. */
export function filtersToQuery(f: MessageFilters, offset = 0): Record<string, string> {
  const q: Record<string, string> = {};
  for (const k of KEYS) {
    const v = f[k].trim();
    if (v) q[k] = v;
  }
  if (offset > 0) q.offset = String(offset);
  return q;
}

/** "/messages?search=x&role=user" (no "?" when nothing is set). */
export function messagesHref(f: MessageFilters, offset = 0): string {
  const qs = new URLSearchParams(filtersToQuery(f, offset)).toString();
  return qs ? `/messages?${qs}` : '/messages';
}

/** A client-side check before asking: the API answers the same in words (400). */
export function filterError(f: MessageFilters): string | null {
  if (f.start_date && f.end_date && f.end_date < f.start_date) return 'The end date is before the start date';
  return null;
}

export function conversationOf(m: { agent_session_id?: string | null; conversation_id?: string | null }) {
  return m.agent_session_id || m.conversation_id || null;
}

/**
 * A conversation's "Last message" cell: the time of its last message (`last_message_at`), or, when none
 * of its messages has a timestamp, its last day as a date, in UTC (a day is not a time: shown as one it
 * read as midnight, 01:00 in Central Europe).
 */
export function lastMessageLabel(
  c: { last_message_at?: string | null; last_date?: string | null },
  opts: { locale?: string; timeZone?: string } = {},
): string {
  if (c.last_message_at) return formatTime(c.last_message_at, opts);
  return formatTime(c.last_date ? `${c.last_date}T00:00:00Z` : null, {
    ...opts,
    timeZone: 'UTC',
    dateOnly: true,
  });
}

/** At most `max` characters of a message, on one line. */
export function snippet(text: string | null | undefined, max = 160): string {
  if (!text) return '';
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

/** One rule the content filter matched (the API's extra `filter_rules` of a flagged message). */
export interface FilterRuleMatch {
  rule_id: number;
  type: string;
  action: string;
  severity?: string;
  description: string | null;
}

const VERDICT_WORDS: Record<string, string> = {
  blocked: 'Blocked by the content filter',
  review: 'Sent to review by the content filter',
  warn: 'Flagged (warning) by the content filter',
};

/**
 * The content filter's verdict on a message in words (issue 28 item 5): what it did, then each rule
 * by its description (else its number), its kind and its action. null for a message not flagged.
 */
export function verdictWords(m: { filter_verdict?: string | null; filter_rules?: FilterRuleMatch[] }) {
  if (!m.filter_verdict) return null;
  const what = VERDICT_WORDS[m.filter_verdict] ?? `Content filter verdict: ${m.filter_verdict}`;
  const rules = (m.filter_rules ?? []).map(
    (r) => `rule “${r.description || `#${r.rule_id}`}” (${r.type}, action ${r.action})`,
  );
  return rules.length > 0 ? `${what}: ${rules.join('; ')}` : what;
}
