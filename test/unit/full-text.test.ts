// The search text of `/api/messages?search=` becomes words passed as parameters, never FTS syntax.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isFullTextArtefact, messageSearchCondition, searchWords } from '../../db/full-text.ts';

test('words are lower-cased and split on punctuation; nothing else survives', () => {
  assert.deepEqual(searchWords('Deploy the API-server, NOW!'), ['deploy', 'the', 'api', 'server', 'now']);
  assert.deepEqual(searchWords('"quoted" OR NEAR(x) *'), ['quoted', 'or', 'near', 'x']);
  assert.deepEqual(searchWords('  ---  '), []);
  assert.equal(searchWords('w '.repeat(100)).length, 32, 'at most 32 words');
});

test('SQLite: every word is a quoted FTS5 string, joined by implicit AND', () => {
  const c = messageSearchCondition('sqlite', 'Fix "bug" OR crash', 'm');
  assert.ok(c);
  assert.match(
    c.sql,
    /^m\.id IN \(SELECT rowid FROM daily_messages_fts WHERE daily_messages_fts MATCH \?\)$/,
  );
  assert.deepEqual(c.params, ['"fix" "bug" "or" "crash"']);
});

test('PostgreSQL: a to_tsquery of quoted words joined by &', () => {
  const c = messageSearchCondition('postgres', "it's done");
  assert.ok(c);
  assert.match(c.sql, /@@ to_tsquery\('simple', \?\)$/);
  assert.deepEqual(c.params, ["'it' & 's' & 'done'"]);
});

test('a search without words gives no condition', () => {
  assert.equal(messageSearchCondition('sqlite', '!!!'), null);
  assert.equal(messageSearchCondition('postgres', ''), null);
});

test('the search structures are recognised, ordinary tables are not', () => {
  for (const name of ['daily_messages_fts', 'daily_messages_fts_data', 'daily_messages_content_search'])
    assert.ok(isFullTextArtefact(name), name);
  for (const name of ['daily_messages', 'daily_messages_tenant_date'])
    assert.ok(!isFullTextArtefact(name), name);
});
