// The checks of a commit on GitHub as the forge's evidence: check runs (GitHub Actions jobs and other
// apps) and the legacy combined commit status, normalised to CheckEvidence and aggregated to one CI
// status; and the log of a failed check for CI repair and its fingerprint:
//   - an Actions job (app slug `github-actions`): the job logs endpoint (a redirect to the log store,
//     followed without the token); 404 while the log is not there yet -> CiEvidenceInsufficientError
//     `logs_not_ready`; 401/403 -> `no_permission` (the token lacks actions:read);
//   - any other check run: its output (title, summary, text); a commit status: its description.
// Pure mapping functions at the top; the reading functions take the Octokit client.
import type { Octokit } from '@octokit/rest';
import { CiEvidenceInsufficientError } from '../../../domain/forge/errors.ts';
import { failureFingerprint } from '../../../domain/forge/fingerprint.ts';
import type { CheckEvidence, CiStatus } from '../../../domain/forge/types.ts';
import { apiStatus, toForgeError } from './api-errors.ts';

/** Log text kept per failed check (the tail). */
export const LOG_TAIL_BYTES = 64 * 1024;

export interface GitHubCheck {
  /** Check run id, or null for a commit status. */
  id: number | null;
  name: string;
  state: CheckEvidence['state'];
  /** The check run's app slug (`github-actions`), null for statuses. */
  app: string | null;
  /** Output text of a check run / description of a status. */
  output: string;
  startedAt: string | null;
  completedAt: string | null;
}

type CheckRunConclusion = string | null | undefined;

/** A check run's status + conclusion as evidence state. */
export function checkRunState(status: string, conclusion: CheckRunConclusion): CheckEvidence['state'] {
  if (status !== 'completed') return 'pending';
  switch (conclusion) {
    case 'success':
    case 'neutral':
      return 'passed';
    case 'skipped':
      return 'skipped';
    case 'cancelled':
      return 'cancelled';
    case 'stale':
      return 'pending';
    default:
      // failure, timed_out, action_required, startup_failure, null
      return 'failed';
  }
}

/** A commit status's state as evidence state. */
export function commitStatusState(state: string): CheckEvidence['state'] {
  if (state === 'success') return 'passed';
  if (state === 'pending') return 'pending';
  return 'failed';
}

/** One CI status of a set of checks: failed > pending > cancelled > passed. */
export function aggregateStatus(checks: GitHubCheck[]): CiStatus {
  if (checks.some((c) => c.state === 'failed')) return 'failed';
  if (checks.some((c) => c.state === 'pending')) return 'running';
  if (checks.some((c) => c.state === 'cancelled')) return 'cancelled';
  return 'passed';
}

/** The check runs and commit statuses at `sha` (latest check run per name, as GitHub lists them). */
export async function readChecks(
  octokit: Octokit,
  owner: string,
  repo: string,
  sha: string,
  secrets: readonly string[],
): Promise<GitHubCheck[]> {
  try {
    const runs = await octokit.paginate(octokit.rest.checks.listForRef, {
      owner,
      repo,
      ref: sha,
      filter: 'latest',
      per_page: 100,
    });
    const status = await octokit.rest.repos.getCombinedStatusForRef({ owner, repo, ref: sha, per_page: 100 });
    const out: GitHubCheck[] = runs.map((r) => ({
      id: Number(r.id),
      name: r.name,
      state: checkRunState(r.status, r.conclusion),
      app: r.app?.slug ?? null,
      output: [r.output?.title, r.output?.summary, r.output?.text].filter(Boolean).join('\n'),
      startedAt: r.started_at ?? null,
      completedAt: r.completed_at ?? null,
    }));
    for (const s of status.data.statuses)
      out.push({
        id: null,
        name: s.context,
        state: commitStatusState(s.state),
        app: null,
        output: s.description ?? '',
        startedAt: s.created_at,
        completedAt: s.state === 'pending' ? null : s.updated_at,
      });
    return out;
  } catch (err) {
    throw toForgeError(err, `read checks of ${sha.slice(0, 12)}`, secrets);
  }
}

const tail = (s: string) => (s.length > LOG_TAIL_BYTES ? s.slice(s.length - LOG_TAIL_BYTES) : s);

/** The log of a failed check (tail), or CiEvidenceInsufficientError when it cannot be read (yet). */
export async function readCheckLog(
  octokit: Octokit,
  owner: string,
  repo: string,
  check: GitHubCheck,
  secrets: readonly string[],
): Promise<string> {
  if (check.id === null || check.app !== 'github-actions')
    return tail(check.output || `${check.name}: ${check.state}`);
  try {
    const r = await octokit.rest.actions.downloadJobLogsForWorkflowRun({ owner, repo, job_id: check.id });
    const data = r.data as unknown;
    const text =
      typeof data === 'string'
        ? data
        : data instanceof ArrayBuffer
          ? Buffer.from(data).toString('utf8')
          : String(data ?? '');
    return tail(text);
  } catch (err) {
    const status = apiStatus(err);
    if (status === 404 || status === 410)
      throw new CiEvidenceInsufficientError(
        'logs_not_ready',
        `The log of check ${check.name} is not available yet (GitHub ${status})`,
      );
    if (status === 401 || status === 403)
      throw new CiEvidenceInsufficientError(
        'no_permission',
        `The log of check ${check.name} cannot be read with the configured token (GitHub ${status}): grant it "actions: read"`,
      );
    throw toForgeError(err, `read the log of check ${check.name}`, secrets);
  }
}

/** Evidence of the checks; failed ones carry the fingerprint of their log (which must be readable). */
export async function evidenceOf(
  octokit: Octokit,
  owner: string,
  repo: string,
  checks: GitHubCheck[],
  secrets: readonly string[],
): Promise<CheckEvidence[]> {
  const out: CheckEvidence[] = [];
  for (const c of checks) {
    if (c.state !== 'failed') {
      out.push({ name: c.name, state: c.state });
      continue;
    }
    const log = await readCheckLog(octokit, owner, repo, c, secrets);
    out.push({ name: c.name, state: 'failed', fingerprint: failureFingerprint(c.name, log, null) });
  }
  return out;
}
