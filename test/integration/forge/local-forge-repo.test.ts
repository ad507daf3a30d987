// The local forge's repositories, worktrees, commits and pull-request records on real Git and a real
// database (both dialects): import of a project (its own repository never written), baselines, two
// worktrees pinned to one baseline, orchestrator commits (stats, nothing changed, the 60-file limit),
// an agent-rewritten `.git` file that must not steer the orchestrator's git, hostile branch names and
// paths, per-repository PR numbering under concurrency, and PR diffs.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import {
  ChangedFilesLimitError,
  ForgePathError,
  InvalidBranchNameError,
  ProjectRepositoryError,
  PullRequestNotFoundError,
  PullRequestStateError,
} from '../../../domain/forge/errors.ts';
import { compareSnapshots } from '../../../domain/forge/integrity.ts';
import type { ForgeRepository, PullRequest } from '../../../domain/forge/types.ts';
import { snapshotGitDir } from '../../../services/forge/integrity.ts';
import { gitIn, type TempRepo, writeFiles } from '../../fixtures/git-repo.ts';
import { type ForgeFixture, startForge } from './support.ts';

let fx: ForgeFixture;
let project: TempRepo;
let repo: ForgeRepository;

before(async () => {
  fx = await startForge({ diffMaxBytes: 2000 });
  project = fx.project({ 'README.md': '# demo\n', 'src/app.js': 'line1\nline2\nline3\n' });
});
after(() => fx.close());

test("import: a bare copy under <data dir>/forge/<id>.git; the default branch and baseline are the project's", async () => {
  const before = await snapshotGitDir(path.join(project.path, '.git'));
  repo = await fx.forge.ensureRepository({ id: 7, path: project.path });
  assert.deepEqual(repo, { repoKey: 'local:7', defaultBranch: 'main' });
  const gitDir = path.join(fx.testDb.dataDir, 'forge', '7.git');
  assert.equal(gitIn(gitDir, 'rev-parse', '--is-bare-repository'), 'true');
  assert.equal(await fx.forge.baseline(repo), project.head());
  // second call reuses the import
  assert.deepEqual(await fx.forge.ensureRepository({ id: 7, path: project.path }), repo);
  // the project's own repository was only read
  assert.deepEqual(compareSnapshots(before, await snapshotGitDir(path.join(project.path, '.git'))), []);
});

test('import refusals: not a repository, a relative path, an empty repository, a bad id', async () => {
  const plain = path.join(fx.testDb.dataDir, 'plain-dir');
  mkdirSync(plain, { recursive: true });
  await assert.rejects(fx.forge.ensureRepository({ id: 8, path: plain }), ProjectRepositoryError);
  await assert.rejects(fx.forge.ensureRepository({ id: 8, path: 'relative/path' }), ProjectRepositoryError);
  await assert.rejects(
    fx.forge.ensureRepository({ id: 8, path: path.join(plain, 'missing') }),
    ProjectRepositoryError,
  );
  const empty = path.join(fx.testDb.dataDir, 'empty-repo');
  mkdirSync(empty);
  gitIn(empty, 'init', '--quiet', '-b', 'main');
  await assert.rejects(fx.forge.ensureRepository({ id: 9, path: empty }), ProjectRepositoryError);
  for (const id of [0, -1, 1.5, Number.NaN])
    await assert.rejects(fx.forge.ensureRepository({ id, path: project.path }), ForgePathError);
  assert.throws(() => fx.forge.gitDir('local:../../etc'), ForgePathError);
  assert.throws(() => fx.forge.gitDir('local:7/../../x'), ForgePathError);
  assert.throws(() => fx.forge.gitDir('github:7'), ForgePathError);
});

test('refreshFromProject fast-forwards to new project commits, never writes the project', async () => {
  const sha = project.commit({ 'docs/new.md': 'new\n' }, 'owner commit');
  assert.deepEqual(await fx.forge.refreshFromProject({ id: 7, path: project.path }), {
    status: 'updated',
    sha,
  });
  assert.equal(await fx.forge.baseline(repo), sha);
  assert.equal((await fx.forge.refreshFromProject({ id: 7, path: project.path })).status, 'up_to_date');
  assert.deepEqual(fx.forge.pullCommand(repo), [
    'git',
    'pull',
    '--ff-only',
    path.join(fx.testDb.dataDir, 'forge', '7.git'),
    'main',
  ]);
});

test('two independent worktrees pinned to one baseline; commits with exact stats; nothing changed -> null', async () => {
  const base = await fx.forge.baseline(repo);
  const a = await fx.forge.createWorktree(repo, { branch: 'svc/wf-a', baseSha: base, path: fx.wtPath('a') });
  const b = await fx.forge.createWorktree(repo, { branch: 'svc/wf-b', baseSha: base, path: fx.wtPath('b') });
  assert.notEqual(a.path, b.path);
  assert.equal(gitIn(a.path, 'rev-parse', 'HEAD'), base);
  assert.equal(gitIn(b.path, 'rev-parse', 'HEAD'), base);
  assert.equal(await fx.forge.commitAll(a, 'nothing yet'), null);

  writeFiles(a.path, {
    'src/app.js': 'line1\nLINE2\nline3\nline4\n',
    'src/new.js': 'a\nb\n',
    'README.md': null,
  });
  const c = await fx.forge.commitAll(a, 'feat: change a');
  assert.ok(c);
  assert.deepEqual(
    { files: c.files, additions: c.additions, deletions: c.deletions },
    { files: 3, additions: 4, deletions: 2 },
  );
  assert.equal(
    gitIn(a.path, 'log', '-1', '--format=%an <%ae>|%cn|%s'),
    'svc orchestrator <orchestrator@svc.invalid>|svc orchestrator|feat: change a',
  );
  // b is untouched by a's commit, and still on the baseline
  assert.equal(readFileSync(path.join(b.path, 'src/app.js'), 'utf8'), 'line1\nline2\nline3\n');
  assert.equal(gitIn(b.path, 'rev-parse', 'HEAD'), base);
  // stats of the commit
  const stats = await fx.forge.diffStats(repo, c.sha);
  assert.deepEqual(
    stats.files.sort((x, y) => x.path.localeCompare(y.path)),
    [
      { path: 'README.md', additions: 0, deletions: 1 },
      { path: 'src/app.js', additions: 2, deletions: 1 },
      { path: 'src/new.js', additions: 2, deletions: 0 },
    ],
  );
  assert.equal(await fx.forge.push(a), c.sha);
  await fx.forge.removeWorktree(a);
  await fx.forge.removeWorktree(b);
  assert.equal(existsSync(a.path), false);
});

test('more than 60 changed files is refused and nothing is committed; 60 is accepted', async () => {
  const base = await fx.forge.baseline(repo);
  const wt = await fx.forge.createWorktree(repo, {
    branch: 'svc/wf-many',
    baseSha: base,
    path: fx.wtPath('many'),
  });
  const files: Record<string, string> = {};
  for (let i = 0; i < 61; i++) files[`gen/f${i}.txt`] = `${i}\n`;
  writeFiles(wt.path, files);
  const err = await fx.forge.commitAll(wt, 'too big').catch((e) => e);
  assert.ok(err instanceof ChangedFilesLimitError);
  assert.equal(err.changedFiles, 61);
  assert.equal(err.limit, 60);
  assert.equal(gitIn(wt.path, 'rev-parse', 'HEAD'), base);
  assert.equal(gitIn(wt.path, 'diff', '--cached', '--name-only'), '', 'index reset');
  writeFiles(wt.path, { 'gen/f60.txt': null });
  const ok = await fx.forge.commitAll(wt, 'sixty');
  assert.equal(ok?.files, 60);
  await fx.forge.removeWorktree(wt);
});

test("an agent-rewritten .git file cannot point the orchestrator's git at the agent's own config", async () => {
  const base = await fx.forge.baseline(repo);
  const wt = await fx.forge.createWorktree(repo, {
    branch: 'svc/wf-evil',
    baseSha: base,
    path: fx.wtPath('evil'),
  });
  const evil = path.join(fx.testDb.dataDir, 'evil-gitdir');
  const marker = path.join(fx.testDb.dataDir, 'filter-ran');
  gitIn(fx.testDb.dataDir, 'init', '--quiet', '--bare', evil);
  writeFileSync(path.join(evil, 'config'), `[filter "x"]\n\tclean = touch ${marker}\n`, { flag: 'a' });
  writeFileSync(path.join(wt.path, '.git'), `gitdir: ${evil}\n`);
  writeFiles(wt.path, { '.gitattributes': '* filter=x\n', 'x.txt': 'x\n' });
  const c = await fx.forge.commitAll(wt, 'agent change');
  assert.equal(c?.files, 2);
  assert.equal(existsSync(marker), false, 'the agent-defined filter never ran');
  assert.equal(
    gitIn(path.join(fx.testDb.dataDir, 'forge', '7.git'), 'rev-parse', 'refs/heads/svc/wf-evil'),
    c?.sha,
  );
});

test('hostile branch names and paths outside the worktree root are refused before git runs', async () => {
  const base = await fx.forge.baseline(repo);
  for (const branch of ['..', '-delete', 'a b', 'x..y', '--orphan', 'refs/../../x', 'a;rm -rf']) {
    await assert.rejects(
      fx.forge.createWorktree(repo, { branch, baseSha: base, path: fx.wtPath('h') }),
      InvalidBranchNameError,
      branch,
    );
    await assert.rejects(fx.forge.deleteBranch(repo, branch), InvalidBranchNameError, branch);
    await assert.rejects(
      fx.forge.openPullRequest({ repo, head: branch, base: 'main', title: 't' }),
      InvalidBranchNameError,
      branch,
    );
  }
  for (const p of [
    '/tmp/outside',
    path.join(fx.forge.worktreeRoot, '..', 'escape'),
    'relative/wt',
    fx.forge.worktreeRoot,
    `${fx.forge.worktreeRoot}-sibling/x`,
  ]) {
    await assert.rejects(
      fx.forge.createWorktree(repo, { branch: 'svc/wf-ok', baseSha: base, path: p }),
      ForgePathError,
      p,
    );
    await assert.rejects(
      fx.forge.removeWorktree({ repoKey: repo.repoKey, path: p, branch: 'svc/wf-ok', baseSha: base }),
      ForgePathError,
      p,
    );
    await assert.rejects(
      fx.forge.commitAll({ repoKey: repo.repoKey, path: p, branch: 'svc/wf-ok', baseSha: base }, 'm'),
      ForgePathError,
      p,
    );
  }
  // a symlink inside the root that leads out of it
  const link = fx.wtPath('link');
  symlinkSync(fx.testDb.dataDir, link);
  await assert.rejects(
    fx.forge.createWorktree(repo, { branch: 'svc/wf-ok', baseSha: base, path: path.join(link, 'x') }),
    /leads outside/,
  );
  // a path inside the root that is not one of the repository's worktrees
  const stray = fx.wtPath('stray');
  mkdirSync(stray);
  await assert.rejects(
    fx.forge.commitAll({ repoKey: repo.repoKey, path: stray, branch: 'svc/wf-ok', baseSha: base }, 'm'),
    ForgePathError,
  );
  for (const baseSha of ['HEAD', 'main', `--${'a'.repeat(38)}`, 'f'.repeat(40)])
    await assert.rejects(
      fx.forge.createWorktree(repo, { branch: 'svc/wf-ok', baseSha, path: fx.wtPath('s') }),
      ForgePathError,
    );
  // an existing branch is never reused or reset
  await assert.rejects(
    fx.forge.createWorktree(repo, { branch: 'svc/wf-evil', baseSha: base, path: fx.wtPath('dup') }),
    PullRequestStateError,
  );
});

test('pull requests: numbered per repository (also under concurrency), refusals, diff with a size cap', async () => {
  const base = await fx.forge.baseline(repo);
  const heads: string[] = [];
  for (let i = 0; i < 5; i++) {
    const wt = await fx.forge.createWorktree(repo, {
      branch: `svc/wf-pr${i}`,
      baseSha: base,
      path: fx.wtPath(`pr${i}`),
    });
    writeFiles(wt.path, { [`pr${i}.txt`]: `${'content line\n'.repeat(i === 0 ? 400 : 1)}` });
    await fx.forge.commitAll(wt, `pr ${i}`);
    heads.push(wt.branch);
  }
  const prs = await Promise.all(
    heads.map((head, i) =>
      fx.forge.openPullRequest({
        repo,
        head,
        base: 'main',
        title: `PR ${i}`,
        body: 'body',
        workflowId: `wf-${i}`,
      }),
    ),
  );
  assert.deepEqual(
    prs.map((p) => p.number).sort((a, b) => a - b),
    [1, 2, 3, 4, 5],
  );
  assert.equal(prs[0]!.status, 'open');
  assert.equal(prs[0]!.baseSha, base);
  // another repository starts at 1
  const other = fx.project({ 'a.txt': 'a\n' });
  const repo2 = await fx.forge.ensureRepository({ id: 8, path: other.path });
  const wt2 = await fx.forge.createWorktree(repo2, {
    branch: 'svc/wf-x',
    baseSha: await fx.forge.baseline(repo2),
    path: fx.wtPath('x'),
  });
  writeFiles(wt2.path, { 'b.txt': 'b\n' });
  await fx.forge.commitAll(wt2, 'b');
  const pr2 = await fx.forge.openPullRequest({
    repo: repo2,
    head: 'svc/wf-x',
    base: 'main',
    title: 'other repo',
  });
  assert.equal(pr2.number, 1);
  assert.equal(pr2.workflowId, null);

  await assert.rejects(
    fx.forge.openPullRequest({ repo, head: heads[1]!, base: 'main', title: 'again' }),
    PullRequestStateError,
  );
  // two openers of the same head at once: exactly one PR (the partial unique index decides)
  const wtDup = await fx.forge.createWorktree(repo, {
    branch: 'svc/wf-dup',
    baseSha: base,
    path: fx.wtPath('dup'),
  });
  writeFiles(wtDup.path, { 'dup.txt': 'd\n' });
  await fx.forge.commitAll(wtDup, 'dup');
  const racing = await Promise.allSettled(
    Array.from({ length: 4 }, () =>
      fx.forge.openPullRequest({ repo, head: 'svc/wf-dup', base: 'main', title: 'dup' }),
    ),
  );
  assert.equal(racing.filter((r) => r.status === 'fulfilled').length, 1);
  for (const r of racing)
    if (r.status === 'rejected') assert.ok(r.reason instanceof PullRequestStateError, String(r.reason));
  // once closed, the head may be proposed again
  const first = racing.find((r) => r.status === 'fulfilled')!;
  await fx.forge.closePullRequest((first as PromiseFulfilledResult<PullRequest>).value);
  const reopened = await fx.forge.openPullRequest({
    repo,
    head: 'svc/wf-dup',
    base: 'main',
    title: 'dup again',
  });
  assert.equal(reopened.number, 7, 'the losing openers took no number');
  await assert.rejects(
    fx.forge.openPullRequest({ repo, head: 'svc/wf-none', base: 'main', title: 't' }),
    PullRequestStateError,
  );
  await assert.rejects(
    fx.forge.openPullRequest({ repo, head: 'main', base: 'main', title: 't' }),
    PullRequestStateError,
  );
  await assert.rejects(
    fx.forge.openPullRequest({ repo, head: heads[1]!, base: 'nope', title: 't' }),
    PullRequestStateError,
  );
  await assert.rejects(fx.forge.getPullRequest(repo, 99), PullRequestNotFoundError);
  await assert.rejects(fx.forge.getPullRequest(repo2, 2), PullRequestNotFoundError);

  const pr0 = prs.find((p) => p.headBranch === heads[0])!;
  const big = await fx.forge.prDiff(pr0);
  assert.deepEqual(big.files, [{ path: 'pr0.txt', additions: 400, deletions: 0 }]);
  assert.equal(big.additions, 400);
  assert.equal(big.truncated, true);
  assert.equal(big.diff.length, 2000);
  assert.ok(big.diff.startsWith('diff --git a/pr0.txt b/pr0.txt'));
  const small = await fx.forge.prDiff(prs.find((p) => p.headBranch === heads[1])!);
  assert.equal(small.truncated, false);
  assert.match(small.diff, /^\+content line$/m);
  assert.equal(small.mergeBaseSha, base);
  other.cleanup();
});
