// Pre-commit convergence (issue 15 item 3; spec document 2 "Limits": 3 pre-commit convergence
// passes). Before the orchestrator commits an agent's work, the repository's declared pre-commit hook
// runs in the worktree; its changes (a formatter's) are kept and it runs again until a pass changes
// nothing, at most LIMITS.preCommitConvergencePasses passes. A hook that fails, or still changes
// files on the last pass, stops the commit with a PreCommitError (the step's milestone says so).
//
// Declaration (decided: the service's own format, not the `pre-commit` framework, which is not
// installed here and would fetch hook code from the network): `.svc/pre-commit` read from the
// worktree's BASELINE commit (so the agent cannot add or change the command that the orchestrator
// runs), same syntax as `.svc/ci` (services/forge/local-ci.ts: one command line, no shell, split on
// blanks; a path with `/` is inside the worktree). The files it runs are the worktree's (like CI runs
// the head's code).
// Running: like CI (runCiCommand): no shell, its own process group, an environment of only PATH,
// HOME/TMPDIR in a scratch directory outside the worktree, LANG and CI=true, a timeout that kills the
// group; a repository-declared Node runtime first on PATH when installed (services/forge/runtimes.ts).
// "Changed nothing" is measured as the tree git would commit (a scratch index: `read-tree HEAD`,
// `add -A`, `write-tree`), so the worktree's own index is never touched here.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LIMITS } from '../../domain/autonomous/limits.ts';
import { AppError } from '../../domain/errors.ts';
import { git } from './git.ts';
import { parseCiDeclaration, runCiCommand } from './local-ci.ts';
import { nodeRuntimeFor } from './runtimes.ts';

export const PRE_COMMIT_FILE = '.svc/pre-commit';
export const DEFAULT_PRE_COMMIT_TIMEOUT_SECONDS = 300;

export type PreCommitErrorCode = 'pre_commit_invalid' | 'pre_commit_failed' | 'pre_commit_not_converged';

/** The hook refused the change; the message starts with the code (it is the milestone's error). */
export class PreCommitError extends AppError {
  constructor(
    readonly code: PreCommitErrorCode,
    message: string,
  ) {
    super(422, `${code}: ${message}`, { code });
  }
}

export interface PreCommitResult {
  declared: boolean;
  /** Passes run (0 when nothing is declared). */
  passes: number;
}

const tailOf = (s: string, n = 1500) => (s.length > n ? `...${s.slice(-n)}` : s).trim();

/** The tree the worktree would commit now (a scratch index; the real one is left alone). */
async function worktreeTree(dir: string, scratch: string): Promise<string> {
  const env = { GIT_INDEX_FILE: path.join(scratch, 'index') };
  rmSync(env.GIT_INDEX_FILE, { force: true });
  await git(['read-tree', 'HEAD'], { cwd: dir, env });
  await git(['add', '-A'], { cwd: dir, env });
  return (await git(['write-tree'], { cwd: dir, env })).stdout.trim();
}

export async function convergePreCommit(opts: {
  worktreePath: string;
  baseSha: string;
  timeoutSeconds?: number;
  maxPasses?: number;
  runtimesDir?: string | null;
  /** Run the hook as the agent account (repository code; services/forge/local-ci.ts `agent`). */
  agent?: Parameters<typeof runCiCommand>[0]['agent'];
  /** The sandbox switch (SVC_SANDBOX; default on): the hook runs in the sandbox like CI. */
  sandbox?: Parameters<typeof runCiCommand>[0]['sandbox'];
}): Promise<PreCommitResult> {
  const dir = opts.worktreePath;
  const listed = await git(['ls-tree', '--name-only', opts.baseSha, '--', PRE_COMMIT_FILE], { cwd: dir });
  if (listed.stdout.trim() !== PRE_COMMIT_FILE) return { declared: false, passes: 0 };
  const text = (
    await git(['show', `${opts.baseSha}:${PRE_COMMIT_FILE}`], {
      cwd: dir,
      maxOutputBytes: 64 * 1024,
      truncate: true,
    })
  ).stdout;
  const decl = parseCiDeclaration(text.replaceAll('.svc/ci', PRE_COMMIT_FILE), null);
  if (decl.kind !== 'command')
    throw new PreCommitError(
      'pre_commit_invalid',
      decl.kind === 'invalid'
        ? decl.reason.replaceAll('.svc/ci', PRE_COMMIT_FILE)
        : `${PRE_COMMIT_FILE} has no command`,
    );
  const maxPasses = opts.maxPasses ?? LIMITS.preCommitConvergencePasses;
  const read = (f: string) =>
    existsSync(path.join(dir, f)) ? readFileSync(path.join(dir, f), 'utf8').slice(0, 1024 * 1024) : null;
  const runtime = nodeRuntimeFor(
    { nvmrc: read('.nvmrc'), toolVersions: read('.tool-versions'), packageJson: read('package.json') },
    opts.runtimesDir,
  );
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'svc-pre-commit-'));
  try {
    let before = await worktreeTree(dir, scratch);
    for (let pass = 1; pass <= maxPasses; pass++) {
      const r = await runCiCommand({
        argv: decl.argv,
        cwd: dir,
        scratchDir: path.join(scratch, `run${pass}`),
        timeoutMs: (opts.timeoutSeconds ?? DEFAULT_PRE_COMMIT_TIMEOUT_SECONDS) * 1000,
        pathPrefix: runtime.pathPrefix,
        notes: runtime.note ? [runtime.note] : [],
        agent: opts.agent ?? null,
        sandbox: opts.sandbox ?? 'on',
      });
      if (r.status !== 'passed')
        throw new PreCommitError(
          'pre_commit_failed',
          `the pre-commit hook (${PRE_COMMIT_FILE}: ${decl.argv.join(' ')}) ${
            r.status === 'failed' ? `failed with exit code ${r.exitCode}` : `did not finish (${r.status})`
          } on pass ${pass}; nothing was committed. Output: ${tailOf(r.logTail)}`,
        );
      const after = await worktreeTree(dir, scratch);
      if (after === before) return { declared: true, passes: pass };
      before = after;
    }
    throw new PreCommitError(
      'pre_commit_not_converged',
      `the pre-commit hook (${PRE_COMMIT_FILE}) still changed files on pass ${maxPasses} of ${maxPasses}; nothing was committed`,
    );
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
