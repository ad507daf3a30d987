// The messages page's filters (web/src/pages/messages/filters.ts): read from the address (malformed
// values dropped, offset snapped to a page), written back with only the set ones, the date order
// check, the conversation a message belongs to, and the one-line snippet.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  conversationOf,
  EMPTY_FILTERS,
  filterError,
  filtersFromQuery,
  filtersToQuery,
  lastMessageLabel,
  messagesHref,
  snippet,
} from '../../web/src/pages/messages/filters.ts';

test('filtersFromQuery keeps valid filters, drops malformed ones, snaps the offset to a page', () => {
  const { filters, offset } = filtersFromQuery({
    search: '  refactor parser ',
    start_date: '2026-01-01',
    end_date: '01/02/2026',
    role: 'system',
    tool: 'claude',
    offset: '73',
  });
  assert.deepEqual(filters, {
    ...EMPTY_FILTERS,
    search: 'refactor parser',
    start_date: '2026-01-01',
    tool: 'claude',
  });
  assert.equal(offset, 50);
  assert.equal(filtersFromQuery({ offset: '-5' }).offset, 0);
  assert.equal(filtersFromQuery({ offset: 'abc' }).offset, 0);
  assert.equal(filtersFromQuery({ role: 'assistant' }).filters.role, 'assistant');
  assert.equal(filtersFromQuery({ search: 'x'.repeat(900) }).filters.search.length, 500);
});

test('filtersToQuery and messagesHref carry only what is set, round-tripping through the address', () => {
  const f = { ...EMPTY_FILTERS, search: 'a&b c', role: 'user' as const, sender: ' ' };
  assert.deepEqual(filtersToQuery(f), { search: 'a&b c', role: 'user' });
  assert.deepEqual(filtersToQuery(f, 100), { search: 'a&b c', role: 'user', offset: '100' });
  assert.equal(messagesHref(EMPTY_FILTERS), '/messages');
  const href = messagesHref(f, 50);
  assert.equal(href, '/messages?search=a%26b+c&role=user&offset=50');
  const back = filtersFromQuery(Object.fromEntries(new URL(href, 'http://x').searchParams));
  assert.deepEqual(back, { filters: { ...f, sender: '' }, offset: 50 });
});

test('filterError refuses an end date before the start date', () => {
  assert.equal(
    filterError({ ...EMPTY_FILTERS, start_date: '2026-02-02', end_date: '2026-02-01' }),
    'The end date is before the start date',
  );
  assert.equal(filterError({ ...EMPTY_FILTERS, start_date: '2026-02-02', end_date: '2026-02-02' }), null);
  assert.equal(filterError({ ...EMPTY_FILTERS, end_date: '2026-02-01' }), null);
});

test('conversationOf prefers the agent session; snippet is one bounded line', () => {
  assert.equal(conversationOf({ agent_session_id: 's1', conversation_id: 'c1' }), 's1');
  assert.equal(conversationOf({ agent_session_id: null, conversation_id: 'c1' }), 'c1');
  assert.equal(conversationOf({ agent_session_id: null, conversation_id: null }), null);
  assert.equal(snippet('  a\n\n b\tc  '), 'a b c');
  assert.equal(snippet('x'.repeat(10), 5), 'xxxx…');
  assert.equal(snippet(null), '');
});

test('a conversation\'s "Last message" is the time of its last message, never its day read as a time', () => {
  const utc = { locale: 'en-GB', timeZone: 'Europe/Berlin' };
  assert.equal(
    lastMessageLabel({ last_message_at: '2026-03-01T10:15:30.000Z', last_date: '2026-03-01' }, utc),
    '01/03/2026, 11:15:30',
  );
  // No timestamp among its messages: the day, as a date (was "01/03/2026, 01:00:00" in Berlin).
  assert.equal(lastMessageLabel({ last_message_at: null, last_date: '2026-03-01' }, utc), '01/03/2026');
  assert.equal(lastMessageLabel({ last_message_at: null, last_date: null }, utc), '—');
});
