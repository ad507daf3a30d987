// Full-text search over daily_messages.content (issue 10: `/api/messages?search=`). Each dialect uses
// its own index, which the drizzle definitions cannot describe, so revision 0013_usage_read_model
// creates them with raw SQL and the schema introspection leaves them out:
// - SQLite: an FTS5 table with external content (`daily_messages_fts`, rowid = daily_messages.id,
//   unicode61 words), kept in step by three triggers on daily_messages;
// - PostgreSQL: a GIN index on to_tsvector('simple', content) (`daily_messages_content_search`).
// Both match whole words, case-insensitively, without stemming; every word of the search must occur.

/** The FTS5 table; its shadow tables are named `<this>_data`, `<this>_idx`, ... */
export const MESSAGE_FTS_TABLE = 'daily_messages_fts';
/** The PostgreSQL expression index. */
export const MESSAGE_SEARCH_INDEX = 'daily_messages_content_search';

/** True for tables and indexes that belong to the full-text search, not to db/schema. */
export const isFullTextArtefact = (name: string) =>
  name === MESSAGE_FTS_TABLE || name.startsWith(`${MESSAGE_FTS_TABLE}_`) || name === MESSAGE_SEARCH_INDEX;

/** The words of a search, lower-cased; punctuation separates words, as both tokenizers do. */
export function searchWords(search: string): string[] {
  return search
    .toLowerCase()
    .split(/[^\p{L}\p{N}_]+/u)
    .filter((w) => w.length > 0)
    .slice(0, 32);
}

/**
 * A condition on daily_messages (aliased `alias`) matching rows whose content holds every word, with
 * its parameters; null when the search has no word (the caller then matches nothing). The words go in
 * as parameters; on SQLite each is a quoted FTS5 string, so no search text is read as FTS syntax.
 */
export function messageSearchCondition(
  dialect: 'sqlite' | 'postgres',
  search: string,
  alias = 'daily_messages',
): { sql: string; params: string[] } | null {
  const words = searchWords(search);
  if (!words.length) return null;
  if (dialect === 'sqlite')
    return {
      sql: `${alias}.id IN (SELECT rowid FROM ${MESSAGE_FTS_TABLE} WHERE ${MESSAGE_FTS_TABLE} MATCH ?)`,
      params: [words.map((w) => `"${w}"`).join(' ')],
    };
  return {
    sql: `to_tsvector('simple', coalesce(${alias}.content, '')) @@ to_tsquery('simple', ?)`,
    params: [words.map((w) => `'${w}'`).join(' & ')],
  };
}
