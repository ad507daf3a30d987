// The display-name caches (services/orgsync/display-names.ts): atomic 0600 writes merged over the
// previous file, a lookup that re-reads only a changed file (at most once a second), a malformed file
// read as empty, prototype keys never resolving, and the ingest hook's rules.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  displayNames,
  displayNamesFile,
  resetDisplayNameLookups,
  withSenderName,
  writeDisplayNames,
} from '../../services/orgsync/display-names.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'orgsync-names-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('writes are atomic, 0600, merged over the previous file', () => {
  writeDisplayNames(
    dir,
    'chatplat_a',
    { users: { u1: 'Ann', u2: 'Ben' }, groups: { c1: 'Eng' } },
    new Date(),
  );
  writeDisplayNames(dir, 'chatplat_a', { users: { u2: 'Benjamin' }, groups: {} }, new Date());
  const file = displayNamesFile(dir, 'chatplat_a');
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.equal(statSync(path.dirname(file)).mode & 0o777, 0o700);
  assert.deepEqual(readdirSync(path.dirname(file)), ['chatplat_a-names.json'], 'no temp file left');
  resetDisplayNameLookups();
  const names = displayNames(dir);
  names.refresh();
  assert.equal(names.user('chatplat_a', 'u1'), 'Ann');
  assert.equal(names.user('chatplat_a', 'u2'), 'Benjamin');
  assert.equal(names.group('chatplat_a', 'c1'), 'Eng');
  assert.equal(names.user('chatplat_b', 'u1'), undefined);
  assert.equal(names.user('chatplat_a', '__proto__'), undefined);
  assert.equal(names.user('chatplat_a', 'constructor'), undefined);
});

test('the lookup re-reads a changed file, at most once a second', async () => {
  resetDisplayNameLookups();
  const names = displayNames(dir);
  names.refresh();
  writeDisplayNames(dir, 'chatplat_b', { users: { x: 'Xu' }, groups: {} }, new Date());
  names.refresh();
  assert.equal(names.user('chatplat_b', 'x'), undefined, 'within the second: the old copy');
  await sleep(1100);
  names.refresh();
  assert.equal(names.user('chatplat_b', 'x'), 'Xu');
});

test('a malformed file reads as empty', async () => {
  writeFileSync(displayNamesFile(dir, 'chatplat_b'), '{not json', { mode: 0o600 });
  resetDisplayNameLookups();
  const names = displayNames(dir);
  names.refresh();
  assert.equal(names.user('chatplat_b', 'x'), undefined);
});

test('senders: named only for chat-platform sources with an id and no name', () => {
  resetDisplayNameLookups();
  const names = displayNames(dir);
  names.refresh();
  const m = (messageSource: string | null, senderId: string | null, senderName: string | null) => ({
    messageSource,
    senderId,
    senderName,
  });
  assert.equal(withSenderName(names, m('chatplat_a', 'u1', null)).senderName, 'Ann');
  assert.equal(withSenderName(names, m('chatplat_a', 'u1', '')).senderName, 'Ann');
  assert.equal(withSenderName(names, m('chatplat_a', 'u1', 'Given')).senderName, 'Given');
  assert.equal(withSenderName(names, m('other', 'u1', null)).senderName, null);
  assert.equal(withSenderName(names, m(null, 'u1', null)).senderName, null);
  assert.equal(withSenderName(names, m('chatplat_a', null, null)).senderName, null);
  assert.equal(withSenderName(names, m('chatplat_a', 'unknown', null)).senderName, null);
});
