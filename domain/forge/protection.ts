// Branch protection rules of the local forge (issue 15 item 1), pure: the declaration's schema and the
// decision whether a pull request meets it. The rules are declared by the protected (base) branch
// itself, in `.svc/branch-protection.json` read from the base commit (never from the head, so a change
// cannot drop its own requirement), like `.svc/ci` is (services/forge/local-ci.ts):
//
//   {
//     "required_checks": ["ci"],         checks that must have passed at the head (the local forge
//                                        has one check, `ci`: the declared CI)
//     "required_approvals": 1,           approval records (LocalForge.reviewPullRequest) needed, 0-10
//     "dismiss_stale_approvals": false,  true: only approvals of the current head count
//     "allow_draft_merge": false         never true on GitHub either; kept for completeness: default false
//   }
//
// Every key is optional; unknown keys, wrong types and unknown check names are refused with a reason
// naming the problem (an invalid file blocks merges: fail closed, the reason says what to fix). A draft
// PR is never merged whatever the file says, unless `allow_draft_merge` is true.
import { z } from 'zod';

export const PROTECTION_FILE = '.svc/branch-protection.json';
const MAX_FILE_BYTES = 16 * 1024;

export const branchProtectionSchema = z
  .object({
    required_checks: z.array(z.string().min(1).max(100)).max(20).default([]),
    required_approvals: z.number().int().min(0).max(10).default(0),
    dismiss_stale_approvals: z.boolean().default(false),
    allow_draft_merge: z.boolean().default(false),
  })
  .strict();

export type BranchProtection = z.infer<typeof branchProtectionSchema>;

export type ProtectionDeclaration =
  | { kind: 'rules'; rules: BranchProtection }
  | { kind: 'invalid'; reason: string }
  | { kind: 'none' };

/** The declaration from the file's content at the base commit (null: no file). */
export function parseBranchProtection(
  text: string | null,
  knownChecks: readonly string[],
): ProtectionDeclaration {
  if (text === null) return { kind: 'none' };
  const invalid = (why: string): ProtectionDeclaration => ({
    kind: 'invalid',
    reason: `${PROTECTION_FILE} is invalid: ${why}`,
  });
  if (text.length > MAX_FILE_BYTES) return invalid(`larger than ${MAX_FILE_BYTES} bytes`);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return invalid('not valid JSON');
  }
  const parsed = branchProtectionSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length ? issue.path.join('.') : 'the file';
    return invalid(`${where}: ${issue.message}`);
  }
  const unknown = parsed.data.required_checks.filter((c) => !knownChecks.includes(c));
  if (unknown.length)
    return invalid(
      `required_checks names ${unknown.join(', ')}; this forge reports only ${knownChecks.join(', ')}`,
    );
  return { kind: 'rules', rules: parsed.data };
}

export interface ProtectionFacts {
  draft: boolean;
  headSha: string;
  /** Checks the repository declares at all (a required check that is not declared never appears). */
  declaredChecks: readonly string[];
  approvals: { reviewer: string; headSha: string }[];
}

/**
 * The first unmet requirement, as a sentence naming it (null: all met). Required checks that are
 * declared but not passed are left out: they are failing/pending evidence of their own (merge-stage
 * rule 3), not a rule refusal; a required check the repository does not declare at all is a rule.
 */
export function unmetRequirement(decl: ProtectionDeclaration, f: ProtectionFacts): string | null {
  if (decl.kind === 'invalid') return `branch protection: ${decl.reason}`;
  const rules = decl.kind === 'rules' ? decl.rules : null;
  if (f.draft && !rules?.allow_draft_merge)
    return 'draft: the pull request is a draft; mark it ready for review';
  if (!rules) return null;
  for (const name of rules.required_checks)
    if (!f.declaredChecks.includes(name))
      return `required check ${name} is missing: the repository declares no ${name} check at the base`;
  const counted = f.approvals.filter((a) => !rules.dismiss_stale_approvals || a.headSha === f.headSha);
  if (counted.length < rules.required_approvals)
    return `required review: ${rules.required_approvals} approval(s) required, ${counted.length} given${
      rules.dismiss_stale_approvals ? ' for the current head' : ''
    }`;
  return null;
}
