// What a workflow produced, read back (spec document 2, "Autonomous development"): a milestone's
// session transcript (services/autonomous/transcript.ts), a milestone's commit diff and stats
// (services/forge/commit-diff.ts), and the workflow's pull request diff and stats on the local forge
// (repository `local:<project id>`). Diff texts are cut at settings.forge.diff_max_bytes (`truncated`
// says so); the stats stay complete.
import { Router } from 'express';
import { z } from 'zod';
import type { WorkflowRow } from '../../../db/repositories/autonomous/workflows.ts';
import { NotFoundError } from '../../../domain/errors.ts';
import { milestoneTranscript } from '../../../services/autonomous/transcript.ts';
import type { AppDeps } from '../../../services/deps.ts';
import { commitDiff } from '../../../services/forge/commit-diff.ts';
import { localForgeFromSettings } from '../../../services/forge/local-forge.ts';
import { LocalRepositories } from '../../../services/forge/local-repositories.ts';
import { endpoint } from '../../openapi/endpoint.ts';
import { AUTONOMOUS_PARAMS, autonomousAccess } from './access.ts';

export const DEFAULT_TRANSCRIPT_PAGE = 200;
export const MAX_TRANSCRIPT_PAGE = 1000;
export const NO_PULL_REQUEST = 'The workflow has no pull request yet';

const pageQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(MAX_TRANSCRIPT_PAGE).default(DEFAULT_TRANSCRIPT_PAGE),
    offset: z.coerce.number().int().min(0).max(1_000_000_000).default(0),
  })
  .strict();

const fileStats = (files: { path: string; additions: number; deletions: number }[]) =>
  files.map((f) => ({ path: f.path, additions: f.additions, deletions: f.deletions }));

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const fileStat = z.looseObject({
  path: z.string(),
  additions: z.number().int(),
  deletions: z.number().int(),
});
const prBaseAnswer = {
  workflow_id: z.string(),
  pr_number: z.number().int(),
  pr_url: z.string().nullable(),
  status: z.string(),
  head_branch: z.string().nullable(),
  base_branch: z.string().nullable(),
  head_sha: z.string().nullable(),
  merge_base_sha: z.string().nullable(),
  additions: z.number().int(),
  deletions: z.number().int(),
  files: z.array(fileStat),
};
const getAutonomousWorkflowsMilestonesSession = endpoint({
  params: AUTONOMOUS_PARAMS.milestone,
  tags: ['autonomous'],
  query: pageQuery,
  responses: { 200: z.looseObject({ workflow_id: z.string(), milestone_id: z.number().int() }) },
});
const getAutonomousWorkflowsMilestonesDiff = endpoint({
  params: AUTONOMOUS_PARAMS.milestone,
  tags: ['autonomous'],
  responses: {
    200: z.looseObject({
      workflow_id: z.string(),
      milestone_id: z.number().int(),
      commit_sha: z.string().nullable(),
      diff: z.string(),
      truncated: z.boolean(),
      additions: z.number().int(),
      deletions: z.number().int(),
      files: z.array(fileStat),
    }),
  },
});
const getAutonomousWorkflowsPrDiff = endpoint({
  params: AUTONOMOUS_PARAMS.workflow,
  tags: ['autonomous'],
  responses: { 200: z.looseObject({ ...prBaseAnswer, diff: z.string(), truncated: z.boolean() }) },
});
const getAutonomousWorkflowsPrStats = endpoint({
  params: AUTONOMOUS_PARAMS.workflow,
  tags: ['autonomous'],
  responses: { 200: z.looseObject({ ...prBaseAnswer, changed_files: z.number().int() }) },
});

export function autonomousReadsRouter(deps: AppDeps): Router {
  const r = Router();
  const access = autonomousAccess(deps);
  const forge = () => localForgeFromSettings(deps.settings, deps.database);

  r.get(
    '/api/autonomous/workflows/:id/milestones/:mid/session',
    getAutonomousWorkflowsMilestonesSession,
    async (req, res) => {
      const { workflow, milestone } = await access.milestone(req);
      const page = getAutonomousWorkflowsMilestonesSession.query(req);
      res.json({
        workflow_id: workflow.workflowId,
        milestone_id: milestone.id,
        ...(await milestoneTranscript(deps.database, milestone, page)),
      });
    },
  );

  r.get(
    '/api/autonomous/workflows/:id/milestones/:mid/diff',
    getAutonomousWorkflowsMilestonesDiff,
    async (req, res) => {
      const { workflow, milestone } = await access.milestone(req);
      const base = { workflow_id: workflow.workflowId, milestone_id: milestone.id };
      if (!milestone.commitSha || workflow.projectId == null) {
        res.json({
          ...base,
          commit_sha: null,
          diff: '',
          truncated: false,
          additions: 0,
          deletions: 0,
          files: [],
        });
        return;
      }
      const d = await commitDiff(
        forge(),
        LocalRepositories.repoKeyOf(workflow.projectId),
        milestone.commitSha,
        deps.settings.forge.diff_max_bytes,
      );
      res.json({
        ...base,
        commit_sha: d.sha,
        diff: d.diff,
        truncated: d.truncated,
        additions: d.additions,
        deletions: d.deletions,
        files: fileStats(d.files),
      });
    },
  );

  async function pullRequestDiff(workflow: WorkflowRow) {
    if (workflow.prNumber == null || workflow.projectId == null || !workflow.projectPath)
      throw new NotFoundError(NO_PULL_REQUEST);
    const f = forge();
    const repo = await f.ensureRepository({ id: workflow.projectId, path: workflow.projectPath });
    const pr = await f.getPullRequest(repo, workflow.prNumber);
    return { pr, diff: await f.prDiff(pr) };
  }

  const prBase = (workflow: WorkflowRow, pr: Awaited<ReturnType<typeof pullRequestDiff>>['pr']) => ({
    workflow_id: workflow.workflowId,
    pr_number: pr.number,
    pr_url: workflow.prUrl,
    status: pr.status,
    head_branch: pr.headBranch,
    base_branch: pr.baseBranch,
  });

  r.get('/api/autonomous/workflows/:id/pr-diff', getAutonomousWorkflowsPrDiff, async (req, res) => {
    const workflow = await access.workflow(req);
    const { pr, diff } = await pullRequestDiff(workflow);
    res.json({
      ...prBase(workflow, pr),
      head_sha: diff.headSha,
      merge_base_sha: diff.mergeBaseSha,
      diff: diff.diff,
      truncated: diff.truncated,
      additions: diff.additions,
      deletions: diff.deletions,
      files: fileStats(diff.files),
    });
  });

  r.get('/api/autonomous/workflows/:id/pr-stats', getAutonomousWorkflowsPrStats, async (req, res) => {
    const workflow = await access.workflow(req);
    const { pr, diff } = await pullRequestDiff(workflow);
    res.json({
      ...prBase(workflow, pr),
      head_sha: diff.headSha,
      merge_base_sha: diff.mergeBaseSha,
      additions: diff.additions,
      deletions: diff.deletions,
      changed_files: diff.files.length,
      files: fileStats(diff.files),
    });
  });

  return r;
}
