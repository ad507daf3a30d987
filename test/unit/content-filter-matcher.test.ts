// The one-pass matcher (domain/content-filter/matcher.ts, issue 31 item 2) against the rule-by-rule
// reference checkText: many rules, overlapping keywords, today's case rules, RE2 groups (inline
// flags, anchors, a group RE2 refuses whole) and an Aho-Corasick table split into several automata.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { needleSet } from '../../domain/content-filter/aho-corasick.ts';
import { compileMatcher, REGEX_GROUP } from '../../domain/content-filter/matcher.ts';
import { checkText, compileRules, type FilterRule } from '../../domain/content-filter/rules.ts';

const rule = (id: number, over: Partial<FilterRule>): FilterRule => ({
  id,
  pattern: 'x',
  type: 'keyword',
  severity: 'medium',
  action: 'block',
  description: null,
  isEnabled: true,
  tenantId: null,
  ...over,
});

const ids = (r: { matches: { rule_id: number }[] }) => r.matches.map((m) => m.rule_id);

test('overlapping keywords are all found: nested, sharing prefixes and suffixes, repeated', () => {
  const compiled = compileRules(
    ['he', 'she', 'his', 'hers', 'ushers', 'her', 'sh', 'e', 'aaa', 'aa'].map((pattern, i) =>
      rule(i + 1, { pattern }),
    ),
  );
  // Both keyword paths: the automaton (forced here) and String#includes (few keywords, the default).
  for (const m of [compileMatcher(compiled, { keywordAutomatonMin: 1 }), compileMatcher(compiled)]) {
    assert.deepEqual(ids(m.check('ushers')), [1, 2, 4, 5, 6, 7, 8]);
    assert.deepEqual(ids(m.check('aaaa')), [9, 10]);
    assert.deepEqual(ids(m.check('a')), []);
    assert.deepEqual(ids(m.check('hi')), []);
    for (const text of ['ushers', 'aaaa', 'his hers', 'xyz', '', 'shhe'])
      assert.deepEqual(m.check(text), checkText(compiled, text), text);
  }
});

test('case: keywords match case-insensitively (String#toLowerCase on both sides, as before), regexes as written', () => {
  const compiled = compileRules([
    rule(1, { pattern: 'SeCrEt' }),
    rule(2, { pattern: 'straße' }),
    rule(3, { pattern: 'İstanbul' }), // lower-cases to two code units
    rule(4, { type: 'regex', pattern: 'Token' }),
    rule(5, { type: 'regex', pattern: '(?i)token-[a-z]+' }),
    rule(6, { pattern: 'ÉTÉ' }),
  ]);
  for (const m of [compileMatcher(compiled, { keywordAutomatonMin: 1 }), compileMatcher(compiled)]) {
    for (const text of [
      'my SECRET',
      'STRASSE',
      'Straße',
      'İSTANBUL',
      'istanbul',
      'token',
      'TOKEN-ABC',
      'Token',
      'été',
      'ÉtÉ',
    ])
      assert.deepEqual(m.check(text), checkText(compiled, text), text);
    assert.deepEqual(ids(m.check('TOKEN-abc')), [5]);
    assert.deepEqual(ids(m.check('a Token')), [4]);
    assert.deepEqual(ids(m.check('ÉtÉ')), [6]);
    m.dispose();
  }
});

test('many rules in one pass give exactly the reference result (1,000 keyword and 100 regex rules, random texts)', () => {
  let seed = 42;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const alphabet = 'abcdeAB-1é ';
  const word = (len: number) => Array.from({ length: len }, () => alphabet[rand(alphabet.length)]).join('');
  const rows: FilterRule[] = [];
  for (let i = 0; i < 1000; i++)
    rows.push(rule(rows.length + 1, { pattern: word(2 + rand(5)).trim() || 'a' }));
  for (let i = 0; i < 100; i++)
    rows.push(
      rule(rows.length + 1, {
        type: 'regex',
        pattern: [`^${word(2)}`, `${word(3)}$`, `[a-c]{${1 + rand(4)}}-${rand(10)}`, `(?i)b${word(2)}`][
          rand(4)
        ]!,
        action: (['warn', 'block', 'review'] as const)[rand(3)],
      }),
    );
  const compiled = compileRules(rows);
  const m = compileMatcher(compiled);
  let matched = 0;
  for (let t = 0; t < 300; t++) {
    const text = word(rand(60));
    const got = m.check(text);
    assert.deepEqual(got, checkText(compiled, text), text);
    matched += got.matches.length;
  }
  assert.ok(matched > 300, `the texts match many rules (${matched})`);
  m.dispose();
  for (const c of compiled) c.dispose();
});

test('regex groups: anchors and inline flags stay per rule; a group RE2 refuses whole is split until it compiles', () => {
  const dup = Array.from({ length: REGEX_GROUP + 3 }, (_, i) =>
    rule(i + 1, { type: 'regex', pattern: i < 2 ? `(?P<n>x${i})` : `^k${i}$` }),
  );
  const compiled = compileRules([...dup, rule(100, { type: 'regex', pattern: '(?i)end$' })]);
  const m = compileMatcher(compiled);
  assert.deepEqual(ids(m.check('ax1')), [2], 'the duplicate group names are still each tested');
  assert.deepEqual(ids(m.check('k5')), [6]);
  assert.deepEqual(ids(m.check('xk5')), []);
  assert.deepEqual(ids(m.check(`k${REGEX_GROUP + 2}`)), [REGEX_GROUP + 3], 'the second group');
  assert.deepEqual(ids(m.check('THE END')), [100]);
  assert.deepEqual(ids(m.check('the end.')), []);
  m.dispose();
});

test('an automaton whose table would be too large is split; every needle is still found once per occurrence', () => {
  const needles = ['abc', 'bcd', 'cde', 'xyz', 'zzz', 'é€'];
  const found = (maxCells: number | undefined, text: string) => {
    const seen: number[] = [];
    needleSet(needles, undefined, maxCells).scan(text, (id) => seen.push(id));
    return seen.sort();
  };
  const text = 'abcde xyzzz é€';
  const whole = found(undefined, text);
  assert.deepEqual(whole, [0, 1, 2, 3, 4, 5]);
  assert.deepEqual(found(1, text), whole, 'one needle per automaton');
  assert.deepEqual(found(30, text), whole);
});
