// Branch protection declarations and their unmet requirement (domain/forge/protection.ts), pure:
// defaults, refusals of bad files with a reason naming the problem, and each requirement in order.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseBranchProtection, unmetRequirement } from '../../domain/forge/protection.ts';

const facts = {
  draft: false,
  headSha: 'h2',
  declaredChecks: ['ci'],
  approvals: [] as { reviewer: string; headSha: string }[],
};

test('no file: nothing required except that a draft is not merged', () => {
  const none = parseBranchProtection(null, ['ci']);
  assert.deepEqual(none, { kind: 'none' });
  assert.equal(unmetRequirement(none, facts), null);
  assert.match(unmetRequirement(none, { ...facts, draft: true }) ?? '', /^draft: /);
});

test('defaults of an empty object; allow_draft_merge lets a draft through', () => {
  const d = parseBranchProtection('{}', ['ci']);
  assert.deepEqual(d, {
    kind: 'rules',
    rules: {
      required_checks: [],
      required_approvals: 0,
      dismiss_stale_approvals: false,
      allow_draft_merge: false,
    },
  });
  const allow = parseBranchProtection('{"allow_draft_merge": true}', ['ci']);
  assert.equal(unmetRequirement(allow, { ...facts, draft: true }), null);
});

test('bad files are invalid with a reason; an invalid declaration is itself the unmet requirement', () => {
  for (const [text, reason] of [
    ['[]', /is invalid: the file: /],
    ['{"required_checks": "ci"}', /required_checks/],
    ['{"required_checks": ["lint"]}', /names lint/],
    ['{"dismiss_stale_approvals": "yes"}', /dismiss_stale_approvals/],
    [`{"x": "${'a'.repeat(17_000)}"}`, /larger than 16384 bytes/],
  ] as const) {
    const d = parseBranchProtection(text, ['ci']);
    assert.equal(d.kind, 'invalid', text.slice(0, 40));
    assert.match(unmetRequirement(d, facts) ?? '', reason);
    assert.match(
      unmetRequirement(d, facts) ?? '',
      /^branch protection: \.svc\/branch-protection\.json is invalid: /,
    );
  }
});

test('requirements in order: draft, required check declared, approvals (stale ones dismissed when asked)', () => {
  const d = parseBranchProtection(
    JSON.stringify({ required_checks: ['ci'], required_approvals: 2, dismiss_stale_approvals: true }),
    ['ci'],
  );
  assert.match(unmetRequirement(d, { ...facts, draft: true }) ?? '', /^draft: /);
  assert.match(unmetRequirement(d, { ...facts, declaredChecks: [] }) ?? '', /^required check ci is missing/);
  const approvals = [
    { reviewer: 'a', headSha: 'h1' },
    { reviewer: 'b', headSha: 'h2' },
  ];
  assert.equal(
    unmetRequirement(d, { ...facts, approvals }),
    'required review: 2 approval(s) required, 1 given for the current head',
  );
  assert.equal(
    unmetRequirement(d, { ...facts, approvals: [...approvals, { reviewer: 'c', headSha: 'h2' }] }),
    null,
  );
});
