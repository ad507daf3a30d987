// Shared setup of the GitHub forge tests: the GitHub fake (test/fixtures/github-fake), a repository on
// it, a project whose origin names that repository, and a GitHubForge on a temp data dir with short
// poll intervals. The egress policy allows the fake's loopback hosts the way other egress tests do
// (`egress.allow_hosts`), and nothing else.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ForgeRepository, PullRequest, Worktree } from '../../../domain/forge/types.ts';
import { createEgressGuard } from '../../../services/egress/guard.ts';
import { GitHubForge, type GitHubForgeOptions } from '../../../services/forge/github/github-forge.ts';
import { gitIn, makeGitRepo, type TempRepo, writeFiles } from '../../fixtures/git-repo.ts';
import { type GitHubFake, startGitHubFake } from '../../fixtures/github-fake/server.ts';

export interface GitHubFixture {
  fake: GitHubFake;
  forge: GitHubForge;
  repoKey: string;
  repo: ForgeRepository;
  project: TempRepo;
  dataDir: string;
  /** A workflow branch with `files` committed and pushed. */
  branch(name: string, files: Record<string, string | null>): Promise<Worktree>;
  openPr(wt: Worktree, extra?: { draft?: boolean }): Promise<PullRequest>;
  close(): Promise<void>;
}

export const LOOPBACK_ALLOWED = ['127.0.0.1', 'localhost'];

export function testForgeOptions(fake: GitHubFake, dataDir: string): GitHubForgeOptions {
  return {
    dataDir,
    apiUrl: fake.apiUrl,
    webUrl: fake.webUrl,
    token: fake.token,
    egress: createEgressGuard(LOOPBACK_ALLOWED),
    pollIntervalMs: 20,
    ciRegisterGraceMs: 300,
    mergeableReads: 6,
    mergeableDelayMs: 10,
    ciTimeoutSeconds: 20,
  };
}

let counter = 0;

export async function startGitHubForge(
  files: Record<string, string>,
  opts: Partial<GitHubForgeOptions> = {},
): Promise<GitHubFixture> {
  const fake = await startGitHubFake();
  const name = `repo${++counter}`;
  const cloneUrl = fake.createRepo('acme', name, files);
  const repoKey = `acme/${name}`;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'svc-github-forge-'));
  const project = makeGitRepo({ 'README.md': 'local copy\n' });
  gitIn(project.path, 'remote', 'add', 'origin', cloneUrl);
  const forge = new GitHubForge({ ...testForgeOptions(fake, dataDir), ...opts });
  const repo = await forge.ensureRepository({ id: 1, path: project.path });
  assert.equal(repo.repoKey, repoKey);
  let n = 0;
  const fx: GitHubFixture = {
    fake,
    forge,
    repoKey,
    repo,
    project,
    dataDir,
    async branch(branchName, f) {
      const wt = await forge.createWorktree(repo, {
        branch: branchName,
        baseSha: await forge.baseline(repo),
        path: path.join(forge.worktreeRoot, `${branchName.replaceAll('/', '-')}-${++n}`),
      });
      writeFiles(wt.path, f);
      assert.ok(await forge.commitAll(wt, branchName));
      await forge.push(wt);
      return wt;
    },
    openPr: (wt, extra = {}) =>
      forge.openPullRequest({ repo, head: wt.branch, base: repo.defaultBranch, title: wt.branch, ...extra }),
    async close() {
      await fake.close();
      project.cleanup();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return fx;
}

/** A CI rule: check `ci` fails with `log` unless status.txt at the head says ok. */
export const statusFileRule =
  (log = (_sha: string) => `FAIL status.txt after ${Date.now() % 1000}ms\nexpected ok\n`) =>
  ({ sha, file }: { sha: string; file: (p: string) => string | null }) => [
    file('status.txt')?.trim() === 'ok'
      ? { name: 'ci', conclusion: 'success' as const, log: 'all good\n' }
      : { name: 'ci', conclusion: 'failure' as const, log: log(sha) },
  ];
