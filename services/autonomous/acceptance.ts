// The acceptance snapshot of an autonomous workflow (issue 15 item 6; spec document 2 "Autonomous
// workflow records": `issue acceptance-snapshot hash`, transitions `verification_pending`).
//
// What the post-merge verifier checks the merged code against:
//   - a text requirement: its text (frozen in the definition snapshot, so it cannot change);
//   - an issue requirement (URL or number): the issue's title and body, read through the project's
//     forge issue tracker (domain/forge/types.ts IssueTracker). A forge without a tracker (the local
//     forge) gives the issue reference itself, as the agent was given it.
// Its SHA-256 (hex) is stored once, in `acceptance_snapshot_hash`, when the workflow starts
// (preparation); the verifier reads the issue again after the merge, and when the hash differs the
// prompt says the issue changed since the work began. A `confirmed` verdict closes the issue through
// the same tracker with a comment (the transition's `close_issue` effect); a tracker failure there
// does not undo the verdict: it is reported back (and kept on the row's `error`).
//
// The tracker is the forge's own (`Forge.issues`); a tracker served in-process can be registered for
// a project (`registerEmbeddedIssueTracker`: the tests' in-memory tracker, or an embedding that has
// its own), and is used when the forge has none. Issue text is capped (ACCEPTANCE_TEXT_MAX_CHARS)
// before it enters a prompt (and so workflow history); the hash covers the whole text.
import { createHash } from 'node:crypto';
import type { Settings } from '../../config/settings.ts';
import type { DatabaseHandle } from '../../db/client.ts';
import { type WorkflowRow, workflowsRepository } from '../../db/repositories/autonomous/workflows.ts';
import { parseDefinitionSnapshot, type Requirement } from '../../domain/autonomous/create-input.ts';
import { requirementText } from '../../domain/autonomous/prompts.ts';
import { NotFoundError } from '../../domain/errors.ts';
import type { Forge, ForgeRepository, IssueTracker } from '../../domain/forge/types.ts';
import { autonomousWorkspace } from './workspace.ts';

export const ACCEPTANCE_TEXT_MAX_CHARS = 20_000;

interface Deps {
  database: DatabaseHandle;
  settings: Settings;
  now: () => Date;
}

export interface AcceptanceSnapshot {
  source: 'text' | 'issue';
  /** The snapshot text (capped at ACCEPTANCE_TEXT_MAX_CHARS). */
  text: string;
  /** SHA-256 (hex) of the whole snapshot text. */
  hash: string;
  /** The hash stored when the workflow started (null: none was stored; this one is stored now). */
  storedHash: string | null;
  changedSinceStart: boolean;
  /** The issue of an issue requirement read from a tracker, else null. */
  issue: { number: number; url: string } | null;
}

const embedded = new Map<number, IssueTracker>();

/** A tracker served in-process for a project's issues (used when the project's forge has none). */
export function registerEmbeddedIssueTracker(projectId: number, tracker: IssueTracker): () => void {
  embedded.set(projectId, tracker);
  return () => {
    if (embedded.get(projectId) === tracker) embedded.delete(projectId);
  };
}

export const snapshotHash = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** The text an issue's acceptance snapshot is made of: its number, title and body. */
export const issueSnapshotText = (issue: { number: number; title: string; body: string }) =>
  `#${issue.number} ${issue.title}\n\n${issue.body}`;

export function acceptanceSnapshots(deps: Deps) {
  const workflows = workflowsRepository(deps.database);
  const workspace = autonomousWorkspace(deps);

  async function row(workflowId: string): Promise<WorkflowRow> {
    const r = await workflows.find(workflowId);
    if (!r) throw new NotFoundError(`Autonomous workflow ${workflowId} not found`);
    return r;
  }

  /** The project's tracker and repository, or null when the requirement's issue cannot be read. */
  async function trackerOf(r: WorkflowRow): Promise<{ tracker: IssueTracker; repo: ForgeRepository } | null> {
    if (r.projectId == null || !r.projectPath) return null;
    // The project's own forge (GitHub for a GitHub origin with a token, else the local forge).
    const forge: Forge = await workspace.forgeOf(r);
    const tracker = forge.issues ?? embedded.get(r.projectId);
    if (!tracker) return null;
    const repo = await forge.ensureRepository({ id: r.projectId, path: r.projectPath });
    return { tracker, repo };
  }

  const issueNumberOf = (req: Requirement): number | null => (req.kind === 'text' ? null : req.number);

  async function build(
    r: WorkflowRow,
  ): Promise<Omit<AcceptanceSnapshot, 'storedHash' | 'changedSinceStart'>> {
    const req = parseDefinitionSnapshot(r.definitionSnapshot).requirement;
    const number = issueNumberOf(req);
    const t = number == null ? null : await trackerOf(r);
    if (number == null || !t) {
      const text = requirementText(req);
      return {
        source: 'text',
        text: text.slice(0, ACCEPTANCE_TEXT_MAX_CHARS),
        hash: snapshotHash(text),
        issue: null,
      };
    }
    const issue = await t.tracker.readIssue(t.repo, number);
    const text = issueSnapshotText(issue);
    return {
      source: 'issue',
      text: text.slice(0, ACCEPTANCE_TEXT_MAX_CHARS),
      hash: snapshotHash(text),
      issue: { number: issue.number, url: issue.url },
    };
  }

  return {
    /** At the start: stores the snapshot's hash once (a later call keeps the first one). */
    async take(workflowId: string): Promise<{ hash: string; taken: boolean }> {
      const r = await row(workflowId);
      if (r.acceptanceSnapshotHash) return { hash: r.acceptanceSnapshotHash, taken: false };
      const s = await build(r);
      await workflows.update(workflowId, { acceptanceSnapshotHash: s.hash }, deps.now());
      return { hash: s.hash, taken: true };
    },

    /** At acceptance verification: the snapshot now, compared with the stored hash (stored if none). */
    async current(workflowId: string): Promise<AcceptanceSnapshot> {
      const r = await row(workflowId);
      const s = await build(r);
      const storedHash = r.acceptanceSnapshotHash ?? null;
      if (!storedHash) await workflows.update(workflowId, { acceptanceSnapshotHash: s.hash }, deps.now());
      return { ...s, storedHash, changedSinceStart: storedHash != null && storedHash !== s.hash };
    },

    /**
     * After a `confirmed` verdict (or a human's override): closes an issue requirement's issue with a
     * comment. Nothing to do for a text requirement or without a tracker.
     */
    async closeIssue(
      workflowId: string,
      how: 'confirmed' | 'override',
    ): Promise<{ closed: boolean; reason: string }> {
      const r = await row(workflowId);
      const number = issueNumberOf(parseDefinitionSnapshot(r.definitionSnapshot).requirement);
      if (number == null) return { closed: false, reason: 'the requirement is not an issue' };
      const t = await trackerOf(r);
      if (!t) return { closed: false, reason: 'the project has no issue tracker' };
      const pr = r.prNumber != null ? ` (pull request #${r.prNumber})` : '';
      const comment =
        how === 'confirmed'
          ? `Resolved by autonomous workflow ${workflowId}${pr}: the post-merge acceptance verification confirmed that the merged change meets this issue.`
          : `Resolved by autonomous workflow ${workflowId}${pr}: ${r.verifiedBy ?? 'a reviewer'} confirmed the acceptance verification by hand.`;
      await t.tracker.closeIssue(t.repo, number, comment);
      return { closed: true, reason: `issue #${number} closed` };
    },
  };
}
