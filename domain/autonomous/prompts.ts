// The prompts the orchestrator gives each step's CLI, and the verdict lines it reads back. Pure: the
// Temporal workflow builds prompts from facts it already holds (no I/O, no secrets), so the same
// workflow history always yields the same prompt.
//
// Every prompt starts with a header line `Step: <kind>` (plus the workflow id and round) so the agent,
// the transcript reader and a scripted test CLI all know which step a conversation turn belongs to.
// Verdicts (plan review, PR review, acceptance verification) are asked for as one line
// `VERDICT: <word>`; the parser reads lines, never the plan body: a plan that mentions "rejected" is
// not a verdict.
import type { MilestoneKind } from './milestones.ts';

export type PromptStep = Exclude<MilestoneKind, 'feedback' | 'merge'>;

export interface PromptFacts {
  workflowId: string;
  requirement: string;
  round: number;
  plan?: string | null;
  feedback?: readonly string[];
  /** ci_diagnosis: the failing check's log tail. */
  ciLog?: string | null;
  /** conflict_repair: the conflicting paths. */
  conflictFiles?: readonly string[];
  /** pr_review / report: the PR number and its change summary. */
  prNumber?: number | null;
  changeSummary?: string | null;
  /** implementation after a PR review that asked for changes. */
  reviewNotes?: string | null;
  /**
   * acceptance_verification: the acceptance snapshot the verdict is checked against (a text
   * requirement's text; an issue requirement's title and body read from the forge's tracker), and
   * whether it changed since the snapshot taken when the workflow started (its hash differs).
   */
  acceptance?: { text: string; source: 'text' | 'issue'; changedSinceStart: boolean } | null;
}

const GUIDE: Readonly<Record<PromptStep, string>> = {
  plan: 'Write a short implementation plan for the requirement below. Do not change any file yet.',
  plan_review:
    'Review the plan below against the requirement. End with one line `VERDICT: approved` or `VERDICT: changes_requested` and your reasons above it.',
  implementation:
    'Implement the requirement in this working tree following the plan. Edit files only: the orchestrator commits, pushes and opens the pull request. Do not run git.',
  test: 'Verify this development round: run or write the tests the change needs and fix what fails. Edit files only; do not run git.',
  pr_review:
    'Review the pull request (the changes in this working tree against the base). End with one line `VERDICT: approved` or `VERDICT: changes_requested`.',
  ci_diagnosis:
    'The CI check of the pull request failed. Diagnose the failure from the log below and fix the code in this working tree. Edit files only; do not run git.',
  conflict_repair:
    'The base branch was merged into this branch and conflicts. Resolve every conflict marker in the files listed below, keeping both intents. Edit files only; do not run git.',
  report:
    'Write the final summary of this change for the pull request: what changed, why, and how it was verified.',
  acceptance_verification:
    'The change was merged. Check, in this checkout of the merged base branch, whether the requirement is met. End with one line `VERDICT: confirmed`, `VERDICT: rejected` or `VERDICT: indeterminate`.',
};

export function stepPrompt(step: PromptStep, f: PromptFacts): string {
  const parts = [
    `Step: ${step} (workflow ${f.workflowId}, round ${f.round})`,
    GUIDE[step],
    '',
    'Requirement:',
    f.requirement,
  ];
  if (f.plan && step !== 'plan') parts.push('', 'Plan:', f.plan);
  if (f.feedback?.length)
    parts.push('', 'Feedback from the user (newest last):', ...f.feedback.map((t) => `- ${t}`));
  if (f.reviewNotes) parts.push('', 'Review notes to address:', f.reviewNotes);
  if (f.prNumber != null) parts.push('', `Pull request: #${f.prNumber}`);
  if (f.changeSummary) parts.push('', 'Changes:', f.changeSummary);
  if (f.conflictFiles?.length) parts.push('', 'Conflicting files:', ...f.conflictFiles.map((p) => `- ${p}`));
  if (f.ciLog) parts.push('', 'CI log (tail):', f.ciLog);
  if (f.acceptance && step === 'acceptance_verification') parts.push('', ...acceptanceLines(f.acceptance));
  return parts.join('\n');
}

function acceptanceLines(a: NonNullable<PromptFacts['acceptance']>): string[] {
  const lines = [
    a.source === 'issue'
      ? 'Acceptance snapshot (the issue as it reads now; check the merged code against it):'
      : 'Acceptance snapshot (the requirement; check the merged code against it):',
    a.text,
  ];
  if (a.changedSinceStart)
    lines.push(
      '',
      'Note: the issue changed since this workflow started (its acceptance snapshot hash differs). Judge against the text above and say which parts were added or changed after the work began.',
    );
  return lines;
}

export const REVIEW_VERDICTS = ['approved', 'changes_requested'] as const;
export const ACCEPTANCE_VERDICTS = ['confirmed', 'rejected', 'indeterminate'] as const;
export type ReviewVerdict = (typeof REVIEW_VERDICTS)[number];
export type AcceptanceVerdict = (typeof ACCEPTANCE_VERDICTS)[number];

/** The last `VERDICT: <word>` line among `allowed`, or null when there is none. Linear in the text. */
export function parseVerdict<T extends string>(text: string, allowed: readonly T[]): T | null {
  let found: T | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.length > 64 || !line.toUpperCase().startsWith('VERDICT:')) continue;
    const word = line
      .slice('VERDICT:'.length)
      .trim()
      .toLowerCase()
      .replace(/[.!`*]+$/, '');
    if ((allowed as readonly string[]).includes(word)) found = word as T;
  }
  return found;
}

/** The requirement as the agent reads it (issue references name the issue; the agent looks it up). */
export function requirementText(
  r:
    | { kind: 'text'; text: string }
    | { kind: 'issue_url'; url: string; number: number }
    | { kind: 'issue_number'; number: number },
): string {
  switch (r.kind) {
    case 'text':
      return r.text;
    case 'issue_url':
      return `Resolve issue #${r.number}: ${r.url}`;
    case 'issue_number':
      return `Resolve issue #${r.number} of this repository.`;
  }
}
