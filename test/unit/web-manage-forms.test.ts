// The /manage pages' pure helpers (no DOM): form text -> API integers, tenant select values, OAuth
// scopes, changed-only settings, the agent install one-liner (shell quoting, --insecure on http,
// PowerShell form) and the compliance summary lines and default period.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { defaultPeriod, labelOf, summaryEntries } from '../../web/src/pages/manage/compliance-view.ts';
import {
  changedOnly,
  intText,
  parseOptionalInt,
  readIntFields,
  scopesOf,
  tenantIdOf,
} from '../../web/src/pages/manage/form-values.ts';
import {
  installCommand,
  installCommandWindows,
  serverOf,
  shellQuote,
} from '../../web/src/pages/manage/install-command.ts';

test('parseOptionalInt: empty is undefined, whole numbers with separators pass, the rest in words', () => {
  assert.deepEqual(parseOptionalInt(''), { ok: true, value: undefined });
  assert.deepEqual(parseOptionalInt('   '), { ok: true, value: undefined });
  assert.deepEqual(parseOptionalInt('0'), { ok: true, value: 0 });
  assert.deepEqual(parseOptionalInt('1,000,000'), { ok: true, value: 1_000_000 });
  assert.deepEqual(parseOptionalInt(' 42 '), { ok: true, value: 42 });
  assert.deepEqual(parseOptionalInt('-1'), { ok: false, error: 'must be a whole number' });
  assert.deepEqual(parseOptionalInt('1.5'), { ok: false, error: 'must be a whole number' });
  assert.deepEqual(parseOptionalInt('1e6'), { ok: false, error: 'must be a whole number' });
  assert.deepEqual(parseOptionalInt('abc'), { ok: false, error: 'must be a whole number' });
  assert.deepEqual(parseOptionalInt('99999999999999999'), { ok: false, error: 'must be a whole number' });
  assert.deepEqual(parseOptionalInt('7', { min: 8 }), { ok: false, error: 'must be at least 8' });
  assert.deepEqual(parseOptionalInt('200', { max: 128 }), { ok: false, error: 'must be at most 128' });
});

test('readIntFields: omits or nulls empty fields, reports each bad field', () => {
  assert.deepEqual(readIntFields({ a: '5', b: '', c: 'x' }), {
    values: { a: 5 },
    errors: { c: 'must be a whole number' },
  });
  assert.deepEqual(readIntFields({ a: '', b: '3' }, { emptyAs: 'null' }), {
    values: { a: null, b: 3 },
    errors: {},
  });
  assert.equal(intText(null), '');
  assert.equal(intText(0), '0');
});

test('tenantIdOf, scopesOf, changedOnly', () => {
  assert.equal(tenantIdOf(''), null);
  assert.equal(tenantIdOf('12'), 12);
  assert.equal(tenantIdOf('0'), null);
  assert.equal(tenantIdOf('1x'), null);
  assert.deepEqual(scopesOf(' openid,email  profile '), ['openid', 'email', 'profile']);
  assert.deepEqual(scopesOf(''), []);
  assert.deepEqual(changedOnly({ a: 1, b: true, c: 3 }, { a: 1, b: false, c: 4 }), { b: false, c: 4 });
  assert.deepEqual(changedOnly({ a: 1 }, { a: 1 }), {});
});

test('installCommand: the README form, --insecure only for http, the token quoted safely', () => {
  assert.equal(
    installCommand('https://svc.example.com', 'abc_DEF-123'),
    'curl -fsSL https://svc.example.com/api/remote/agent/install.sh | bash -s -- --server https://svc.example.com --token abc_DEF-123',
  );
  assert.equal(
    installCommand('http://127.0.0.1:19888/', 'tok'),
    'curl -fsSL http://127.0.0.1:19888/api/remote/agent/install.sh | bash -s -- --server http://127.0.0.1:19888 --token tok --insecure',
  );
  assert.match(installCommand('https://a.example', 't', { name: "bob's box" }), /--name 'bob'\\''s box'$/);
  assert.throws(() => serverOf('javascript:alert(1)'), /http or https/);
  assert.throws(() => serverOf('not a url'));
  // Whatever the token holds, the shell sees it as one literal word.
  for (const nasty of ["a'b", '$(id)', 'x; rm -rf /', '`id`', 'a b']) {
    const out = execFileSync('sh', ['-c', `printf %s ${shellQuote(nasty)}`]).toString();
    assert.equal(out, nasty);
  }
  assert.equal(
    installCommandWindows('http://h:1', "t'k"),
    "& ([scriptblock]::Create((irm 'http://h:1/api/remote/agent/install.ps1'))) -Server 'http://h:1' -Token 't''k' -Insecure",
  );
  assert.ok(!installCommandWindows('https://h', 't').includes('-Insecure'));
});

test('compliance summary lines and the default period', () => {
  assert.equal(labelOf('rows_past_retention'), 'Rows past retention');
  assert.deepEqual(
    summaryEntries({ total_tokens: 1234567, truncated: false, by_action: { A: 1 }, note: 'x', gone: null }),
    [
      ['Total tokens', (1234567).toLocaleString()],
      ['Truncated', 'no'],
      ['By action', '{"A":1}'],
      ['Note', 'x'],
      ['Gone', '—'],
    ],
  );
  assert.deepEqual(summaryEntries(null), []);
  assert.deepEqual(defaultPeriod(new Date('2026-03-05T23:59:00Z')), {
    start: '2026-02-04',
    end: '2026-03-05',
  });
  assert.deepEqual(defaultPeriod(new Date('2026-03-05T00:00:00Z'), 1), {
    start: '2026-03-05',
    end: '2026-03-05',
  });
});
