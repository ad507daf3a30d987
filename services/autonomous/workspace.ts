// What an autonomous workflow does with its code host, keyed by the workflow row (issue 13 item 6):
// the orchestrator's side of "the agent edits files, the orchestrator commits, pushes, opens the PR,
// runs CI and merges". Every operation reads the row afresh and is idempotent, because Temporal may
// run an activity again after a worker died mid-way (prepare reuses an existing worktree, openPr
// reuses the recorded PR, commit finds nothing to commit the second time).
//
// The forge is chosen per project (services/forge/forge-for-project.ts): GitHub when the project's
// origin is a GitHub repository and its tenant has a token, else the local one (local-forge.ts).
// Worktrees live under the forge's worktree root as `<workflow id>`; the branch is
// domain/forge/branch-name.ts workflowBranch(id). A batch item pins its worktree to the batch's one
// baseline (the first item's pin wins); a fork starts from the baseline its row was created with.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { Settings } from '../../config/settings.ts';
import type { DatabaseHandle } from '../../db/client.ts';
import { batchesRepository } from '../../db/repositories/autonomous/batches.ts';
import { type WorkflowRow, workflowsRepository } from '../../db/repositories/autonomous/workflows.ts';
import { NotFoundError } from '../../domain/errors.ts';
import { decideMergeStep, type MergeDecision } from '../../domain/forge/merge-decision.ts';
import type {
  CiResult,
  ForgeRepository,
  MergeResult,
  PullRequest,
  Worktree,
} from '../../domain/forge/types.ts';
import { forgeSelector, type ProjectForge } from '../forge/forge-for-project.ts';
import { workflowBranch } from '../forge/git.ts';
import { type LocalForge, localForgeFromSettings } from '../forge/local-forge.ts';
import { type MergeContext, observeMerge, refusalOf } from '../forge/observe.ts';
import { resolveProjectPath } from './projects.ts';

/** CI output handed to the repairing agent (and kept in workflow history): the last 8 KiB. */
export const CI_LOG_FOR_PROMPT_BYTES = 8 * 1024;

interface Deps {
  database: DatabaseHandle;
  settings: Settings;
  now: () => Date;
}

export interface PreparedWorkspace {
  worktreePath: string;
  branch: string;
  baselineSha: string;
  repoKey: string;
  defaultBranch: string;
}

export interface CiSummary {
  status: string;
  headSha: string;
  logTail: string | null;
}

const tail = (s: string | null | undefined, bytes = CI_LOG_FOR_PROMPT_BYTES) =>
  s == null ? null : s.length > bytes ? s.slice(s.length - bytes) : s;

export function autonomousWorkspace(deps: Deps) {
  const workflows = workflowsRepository(deps.database);
  const batches = batchesRepository(deps.database);
  let forgeInstance: LocalForge | undefined;
  const localForge = () => {
    forgeInstance ??= localForgeFromSettings(deps.settings, deps.database);
    return forgeInstance;
  };
  // The project's forge: GitHub when its origin is a GitHub repository and its tenant has a token
  // (services/forge/forge-for-project.ts), else the local forge.
  const forges = forgeSelector(deps.settings, deps.database, { local: localForge });
  const forgeOf = (r: WorkflowRow): Promise<ProjectForge> => forges.forProject(r.projectPath, r.tenantId);

  async function row(workflowId: string): Promise<WorkflowRow> {
    const r = await workflows.find(workflowId);
    if (!r) throw new NotFoundError(`Autonomous workflow ${workflowId} not found`);
    return r;
  }

  async function repoOf(r: WorkflowRow): Promise<ForgeRepository> {
    if (r.projectId == null || !r.projectPath)
      throw new NotFoundError(`Autonomous workflow ${r.workflowId} has no project`);
    return (await forgeOf(r)).ensureRepository({ id: r.projectId, path: r.projectPath });
  }

  function worktreeOf(r: WorkflowRow, repo: ForgeRepository): Worktree {
    if (!r.preferredWorktreePath || !r.branch || !r.baselineSha)
      throw new NotFoundError(`Autonomous workflow ${r.workflowId} has no worktree yet`);
    return { repoKey: repo.repoKey, path: r.preferredWorktreePath, branch: r.branch, baseSha: r.baselineSha };
  }

  async function pullRequestOf(r: WorkflowRow): Promise<PullRequest> {
    if (r.prNumber == null)
      throw new NotFoundError(`Autonomous workflow ${r.workflowId} has no pull request`);
    return (await forgeOf(r)).getPullRequest(await repoOf(r), r.prNumber);
  }

  async function confined(r: WorkflowRow): Promise<void> {
    try {
      if (r.tenantId == null || !r.projectPath) throw new Error('A tenant is required');
      await resolveProjectPath(deps.settings, r.tenantId, r.projectPath);
    } catch (err) {
      // NotFoundError: the activity fails for good (activities/autonomous/orchestration.ts forgeCall).
      throw new NotFoundError(`Autonomous workflow ${r.workflowId}: ${(err as Error).message}`);
    }
  }

  const present = (dir: string) => existsSync(dir) && readdirSync(dir).length > 0;

  return {
    /** The forge of a workflow's project: GitHub or local (services/forge/forge-for-project.ts). */
    forgeOf,

    /** The worktree of the workflow: created once (baseline pinned), reused afterwards. */
    async prepare(workflowId: string): Promise<PreparedWorkspace> {
      const r = await row(workflowId);
      const f = await forgeOf(r);
      const repo = await repoOf(r);
      if (r.preferredWorktreePath && r.branch && r.baselineSha && present(r.preferredWorktreePath))
        return {
          worktreePath: r.preferredWorktreePath,
          branch: r.branch,
          baselineSha: r.baselineSha,
          repoKey: repo.repoKey,
          defaultBranch: repo.defaultBranch,
        };
      // Before the first worktree: the project is still in the tenant's folder (a row from before
      // tenant folders, or a path changed since creation, is refused, nothing of it touched).
      if (!r.preferredWorktreePath) await confined(r);
      let baseline = r.baselineSha;
      if (!baseline) {
        // The project's new commits come in first (when they fast-forward), so "origin/main" is current.
        await f.refreshFromProject({ id: r.projectId!, path: r.projectPath! });
        baseline = await f.baseline(repo);
        if (r.batchId) baseline = (await batches.pinBaseline(r.batchId, baseline, deps.now())) ?? baseline;
      }
      const branch = workflowBranch(workflowId);
      const worktreePath = path.join(f.worktreeRoot, workflowId);
      // A run that died between `git worktree add` and the row update leaves the branch behind: start
      // it again from the baseline (nothing of the agent's can be on it yet: commits come later).
      if (!r.preferredWorktreePath) await f.deleteBranch(repo, branch).catch(() => undefined);
      if (!present(worktreePath)) {
        await f
          .removeWorktree({ repoKey: repo.repoKey, path: worktreePath, branch, baseSha: baseline })
          .catch(() => undefined);
        await f.deleteBranch(repo, branch).catch(() => undefined);
        await f.createWorktree(repo, { branch, baseSha: baseline, path: worktreePath });
      }
      await workflows.update(
        workflowId,
        { preferredWorktreePath: worktreePath, branch, baselineSha: baseline },
        deps.now(),
      );
      return {
        worktreePath,
        branch,
        baselineSha: baseline,
        repoKey: repo.repoKey,
        defaultBranch: repo.defaultBranch,
      };
    },

    /** Commits the agent's edits as the orchestrator; null when nothing changed. */
    async commit(workflowId: string, message: string) {
      const r = await row(workflowId);
      return (await forgeOf(r)).commitAll(worktreeOf(r, await repoOf(r)), message);
    },

    /** Pushes the branch and opens the PR once (a second call returns the recorded one). */
    async openPullRequest(
      workflowId: string,
      title: string,
      body: string,
    ): Promise<{ number: number; url: string }> {
      const r = await row(workflowId);
      const repo = await repoOf(r);
      if (r.prNumber != null) return { number: r.prNumber, url: r.prUrl ?? `${repo.repoKey}#${r.prNumber}` };
      const wt = worktreeOf(r, repo);
      await (await forgeOf(r)).push(wt);
      const pr = await (await forgeOf(r)).openPullRequest({
        repo,
        head: wt.branch,
        base: repo.defaultBranch,
        title,
        body,
        workflowId,
      });
      const url = `${repo.repoKey}#${pr.number}`;
      await workflows.update(workflowId, { prNumber: pr.number, prUrl: url }, deps.now());
      return { number: pr.number, url };
    },

    /** Pushes new commits of the worktree (the local forge's branches are already the remote's). */
    async push(workflowId: string): Promise<string> {
      const r = await row(workflowId);
      return (await forgeOf(r)).push(worktreeOf(r, await repoOf(r)));
    },

    /** A short change summary of the PR for prompts: files with +/- counts. */
    async changeSummary(workflowId: string): Promise<string> {
      const r = await row(workflowId);
      const d = await (await forgeOf(r)).prDiff(await pullRequestOf(r));
      const lines = d.files.slice(0, 60).map((f) => `${f.path} (+${f.additions} -${f.deletions})`);
      if (d.files.length > 60) lines.push(`... and ${d.files.length - 60} more files`);
      return lines.join('\n');
    },

    async runCi(workflowId: string, signal?: AbortSignal): Promise<CiSummary> {
      const r = await row(workflowId);
      const result: CiResult = await (await forgeOf(r)).runCi(await pullRequestOf(r), { signal });
      if (result.status === 'no_ci')
        return { status: 'no_ci', headSha: result.headSha, logTail: result.reason };
      return { status: result.status, headSha: result.headSha, logTail: tail(result.logTail) };
    },

    /** One merge-stage observation and the decision of the spec's order (domain/forge/merge-decision.ts). */
    async decideMerge(
      workflowId: string,
      ctx: MergeContext,
    ): Promise<{ decision: MergeDecision; ciLogTail: string | null; headSha: string }> {
      const r = await row(workflowId);
      const pr = await pullRequestOf(r);
      const decision = decideMergeStep(await observeMerge(await forgeOf(r), pr, ctx));
      const latest = decision.action === 'ci_repair' ? await (await forgeOf(r)).latestCi(pr) : null;
      return { decision, ciLogTail: tail(latest?.logTail), headSha: pr.headSha };
    },

    async sync(workflowId: string) {
      const r = await row(workflowId);
      return (await forgeOf(r)).syncWithBase(await pullRequestOf(r));
    },

    async merge(
      workflowId: string,
      title: string,
    ): Promise<{ result: MergeResult; refusal: MergeContext['refusal'] }> {
      const r = await row(workflowId);
      const result = await (await forgeOf(r)).merge(await pullRequestOf(r), {
        method: 'merge',
        message: title,
      });
      return { result, refusal: refusalOf(result) };
    },

    async beginConflictResolution(workflowId: string) {
      const r = await row(workflowId);
      const repo = await repoOf(r);
      return (await forgeOf(r)).beginConflictResolution(worktreeOf(r, repo), await pullRequestOf(r));
    },

    async completeConflictResolution(workflowId: string) {
      const r = await row(workflowId);
      return (await forgeOf(r)).completeConflictResolution(worktreeOf(r, await repoOf(r)));
    },

    async abortConflictResolution(workflowId: string) {
      const r = await row(workflowId);
      await (await forgeOf(r)).abortConflictResolution(worktreeOf(r, await repoOf(r)));
    },

    /**
     * A checkout of the merged base branch for the acceptance check, on its own branch
     * (`<workflow branch>-verify`), recreated on every call.
     */
    async prepareVerification(workflowId: string): Promise<string> {
      const r = await row(workflowId);
      const f = await forgeOf(r);
      const repo = await repoOf(r);
      const branch = `${workflowBranch(workflowId)}-verify`;
      const dir = path.join(f.worktreeRoot, `${workflowId}-verify`);
      await f
        .removeWorktree({ repoKey: repo.repoKey, path: dir, branch, baseSha: '' })
        .catch(() => undefined);
      await f.deleteBranch(repo, branch).catch(() => undefined);
      await f.createWorktree(repo, { branch, baseSha: await f.baseline(repo), path: dir });
      return dir;
    },

    /** Removes the workflow's worktrees and branches (after the merge, or when it is over). */
    async cleanup(workflowId: string): Promise<void> {
      const r = await row(workflowId);
      if (r.projectId == null || !r.projectPath) return;
      const f = await forgeOf(r);
      const repo = await repoOf(r);
      const branch = r.branch ?? workflowBranch(workflowId);
      for (const [b, dir] of [
        [branch, r.preferredWorktreePath ?? path.join(f.worktreeRoot, workflowId)],
        [`${workflowBranch(workflowId)}-verify`, path.join(f.worktreeRoot, `${workflowId}-verify`)],
      ] as const) {
        await f
          .removeWorktree({ repoKey: repo.repoKey, path: dir, branch: b, baseSha: '' })
          .catch(() => undefined);
        await f.deleteBranch(repo, b).catch(() => undefined);
      }
    },

    /** How the project owner takes the merged change into their own repository. */
    async pullCommand(workflowId: string): Promise<string[]> {
      const r = await row(workflowId);
      return (await forgeOf(r)).pullCommand(await repoOf(r));
    },
  };
}

export type AutonomousWorkspace = ReturnType<typeof autonomousWorkspace>;
