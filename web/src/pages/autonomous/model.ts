// The autonomous pages' pure client logic (no DOM: node imports it in
// test/unit/web-autonomous-model.test.ts): the response shapes of /api/autonomous we read, the
// creation body built from the form (one workflow or a batch, as the API's creation contract names
// the fields), which controls a status offers, the timeline's token summary (its total must equal the
// workflow's total_tokens: both are sums of the milestones' own increments), the live activity list
// (bounded, one line of words per SSE event), and a unified diff split into typed lines.

import type { WorkflowStatus } from '../../../../domain/autonomous/states.ts';
import { formatNumber } from '../../ui/format.ts';

// The statuses are the server's own list (pure, no imports): one definition for both sides.
export { WORKFLOW_STATUSES, type WorkflowStatus } from '../../../../domain/autonomous/states.ts';

export const CLI_TOOLS = ['cli_alpha', 'cli_beta', 'cli_gamma', 'cli_delta'] as const;
export const BRANCH_STRATEGIES = [
  { value: 'worktree', label: 'Independent worktree (default)' },
  { value: 'new_branch', label: 'New branch' },
  { value: 'current_branch', label: 'Current branch' },
] as const;

export interface Workflow {
  id: string;
  workflow_id: string;
  title: string | null;
  status: WorkflowStatus;
  current_phase: string;
  previous_status: string | null;
  paused_by: string | null;
  error: string | null;
  project_path: string | null;
  project_id: number | null;
  cli_tool: string | null;
  model: string | null;
  branch_strategy: string | null;
  branch: string | null;
  batch_id: string | null;
  batch_position: number | null;
  pr_number: number | null;
  pr_url: string | null;
  total_tokens: number;
  input_tokens: number;
  output_tokens: number;
  request_count: number;
  verification_status: string | null;
  verified_by: string | null;
  forked_from_workflow_id: string | null;
  forked_from_milestone_id: number | null;
  planning_deadline_at: string | null;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
  definition_snapshot: Record<string, unknown> | null;
  milestone_count?: number;
}

export interface Milestone {
  id: number;
  workflow_id: string;
  sequence: number;
  phase: string;
  kind: string;
  title: string | null;
  status: string;
  attempt: number;
  session_line: string | null;
  content: string | null;
  commit_sha: string | null;
  diff_additions: number;
  diff_deletions: number;
  diff_files: number;
  error: string | null;
  phase_total_tokens: number;
  phase_input_tokens: number;
  phase_output_tokens: number;
  phase_request_count: number;
  is_cancelled: boolean | number;
  started_at: string | null;
  finished_at: string | null;
  created_at: string;
}

export interface FileStat {
  path: string;
  additions: number;
  deletions: number;
}

export interface DiffAnswer {
  commit_sha?: string | null;
  diff: string;
  truncated: boolean;
  additions: number;
  deletions: number;
  files: FileStat[];
}

/** "1,200 in, 34 out, 2 requests". */
export function tokenParts(input: number, output: number, requests: number): string {
  return `${formatNumber(input)} in, ${formatNumber(output)} out, ${formatNumber(requests)} request${Number(requests) === 1 ? '' : 's'}`;
}

/** "1,234 (1,200 in, 34 out, 2 requests)". */
export function tokenBreakdown(total: number, input: number, output: number, requests: number): string {
  return `${formatNumber(total)} (${tokenParts(input, output, requests)})`;
}

// ---- status words -------------------------------------------------------------------------------

export type StatusTone = 'running' | 'held' | 'done' | 'bad' | 'waiting';

export function statusTone(s: string): StatusTone {
  if (s === 'completed') return 'done';
  if (s === 'failed' || s === 'cancelled') return 'bad';
  if (s === 'paused' || s === 'waiting' || s === 'planning_timeout') return 'held';
  if (s === 'queued' || s === 'pending') return 'waiting';
  return 'running';
}

/** "verification_pending" -> "verification pending"; a paused status says why. */
export function statusLabel(status: string, pausedBy?: string | null): string {
  const words = status.replace(/_/g, ' ');
  return status === 'paused' && pausedBy ? `${words} (${pausedBy.replace(/_/g, ' ')})` : words;
}

export const isTerminalStatus = (s: string) => s === 'completed' || s === 'failed' || s === 'cancelled';
const RUNNING = new Set([
  'preparing',
  'planning',
  'developing',
  'pr_review',
  'reporting',
  'merging',
  'verification_pending',
]);

// ---- controls -----------------------------------------------------------------------------------

export type ControlName =
  | 'pause'
  | 'resume'
  | 'stop'
  | 'retry'
  | 'done'
  | 'feedback'
  | 'verification_override'
  | 'extend'
  | 'delete';

/**
 * The controls a workflow offers in its status, in display order (mirrors the transition table of
 * domain/autonomous/transitions.ts; the API stays the judge and answers 409 with its reason, which
 * the page shows). Pause, resume, stop and done are offered while the workflow is not over (the
 * status moves under a live page: a click at the wrong moment shows the API's refusal instead of a
 * silently missing button); the likely one comes first. The others appear when their status allows.
 */
export function controlsFor(w: Pick<Workflow, 'status' | 'paused_by'>): ControlName[] {
  const s = w.status;
  const out: ControlName[] = [];
  if (!isTerminalStatus(s) && s !== 'planning_timeout')
    out.push(...(s === 'paused' ? (['resume', 'pause'] as const) : (['pause', 'resume'] as const)));
  if (s === 'waiting') out.push('feedback');
  if (s === 'paused' && w.paused_by === 'verification') out.push('verification_override');
  if (s === 'planning' || s === 'planning_timeout') out.push('extend');
  if (s === 'failed' || s === 'planning_timeout') out.push('retry');
  if (!isTerminalStatus(s)) out.push('stop');
  if (!isTerminalStatus(s) && s !== 'queued' && s !== 'pending') out.push('done');
  if (!RUNNING.has(s) && s !== 'waiting' && s !== 'paused' && s !== 'planning_timeout') out.push('delete');
  return out;
}

/** The API path of a simple (body-less) control. */
export const controlPath = (id: string, c: 'pause' | 'resume' | 'stop' | 'retry' | 'done') =>
  `/api/autonomous/workflows/${encodeURIComponent(id)}/${c}`;

/** Destructive controls ask first; the question names what is lost. */
export const CONFIRM: Partial<Record<ControlName, string>> = {
  stop: 'Stop this workflow? The agent is terminated and the workflow is cancelled; later batch items are cancelled too.',
  done: 'Mark this workflow done? Any running agent is terminated and its worktree removed.',
  delete: 'Delete this workflow? Its record, milestones and worktree are removed for good.',
  verification_override:
    'Override the acceptance verification? The workflow completes and you are recorded as the verifier.',
};

export const cancelRoundQuestion = (m: Pick<Milestone, 'sequence' | 'kind'>) =>
  `Cancel the round at milestone ${m.sequence} (${m.kind.replace(/_/g, ' ')})? Later steps are cancelled and the workflow waits for your feedback.`;

// ---- creation -----------------------------------------------------------------------------------

export interface CreateForm {
  mode: 'single' | 'batch';
  requirement: string;
  /** Batch: one requirement per non-empty line. */
  requirements: string;
  project_path: string;
  cli_tool: string;
  model: string;
  branch_strategy: string;
}

export const emptyCreateForm = (): CreateForm => ({
  mode: 'single',
  requirement: '',
  requirements: '',
  project_path: '',
  cli_tool: '',
  model: '',
  branch_strategy: 'worktree',
});

export type CreateBody =
  | { requirement: string; project_path: string; cli_tool?: string; model?: string; branch_strategy?: string }
  | {
      items: { requirement: string; cli_tool?: string; model?: string }[];
      project_path: string;
    };

/** Field errors found before sending (the API judges the rest and names the field in its 400). */
export type CreateErrors = Partial<Record<'requirement' | 'requirements' | 'project_path', string>>;

export const MAX_BATCH_ITEMS = 50;

export function batchItems(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

export function buildCreateBody(f: CreateForm): { body?: CreateBody; errors: CreateErrors } {
  const errors: CreateErrors = {};
  const project = f.project_path.trim();
  if (!project) errors.project_path = 'Enter the project path (a Git repository on the server).';
  const tool = f.cli_tool.trim() || undefined;
  const model = f.model.trim() || undefined;
  if (f.mode === 'batch') {
    const items = batchItems(f.requirements);
    if (items.length === 0) errors.requirements = 'Enter at least one requirement, one per line.';
    else if (items.length > MAX_BATCH_ITEMS)
      errors.requirements = `A batch holds at most ${MAX_BATCH_ITEMS} requirements (${items.length} given).`;
    if (Object.keys(errors).length) return { errors };
    return {
      errors,
      body: {
        items: items.map((requirement) => ({
          requirement,
          ...(tool ? { cli_tool: tool } : {}),
          ...(model ? { model } : {}),
        })),
        project_path: project,
      },
    };
  }
  const requirement = f.requirement.trim();
  if (!requirement) errors.requirement = 'Enter the requirement: text, an issue URL or an issue number.';
  if (Object.keys(errors).length) return { errors };
  return {
    errors,
    body: {
      requirement,
      project_path: project,
      ...(tool ? { cli_tool: tool } : {}),
      ...(model ? { model } : {}),
      ...(f.branch_strategy ? { branch_strategy: f.branch_strategy } : {}),
    },
  };
}

/** The project path's hint: the caller's own folder(s) when the API named them. */
export function projectPathHint(roots: string[] | null): string {
  const generic =
    "Absolute path of a Git repository on the server, in your tenant's folder tenant-<id> under a root of SVC_AUTONOMOUS_PROJECT_ROOTS.";
  if (roots === null) return generic;
  if (roots.length === 0) return 'You belong to no tenant, so you have no project folder.';
  return `Absolute path of a Git repository inside ${roots.length === 1 ? 'your project folder' : 'one of your project folders'}: ${roots.join(', ')}`;
}

/** The workflow to open after creation: the single one, or the batch's first. */
export function createdTarget(answer: unknown): { workflowId?: string; batchId?: string } {
  const a = answer as { id?: string; batch?: { id?: string }; workflows?: { id?: string }[] };
  if (a?.batch?.id) return { batchId: a.batch.id, workflowId: a.workflows?.[0]?.id };
  return { workflowId: a?.id };
}

// ---- timeline -----------------------------------------------------------------------------------

export interface TimelineSummary {
  total: number;
  input: number;
  output: number;
  requests: number;
  /** Tokens per phase in the order phases first appear. */
  byPhase: { phase: string; tokens: number; milestones: number }[];
}

const n = (v: unknown) => (typeof v === 'number' ? v : Number(v ?? 0)) || 0;

export function summarizeTimeline(ms: Milestone[]): TimelineSummary {
  const byPhase = new Map<string, { phase: string; tokens: number; milestones: number }>();
  const s: TimelineSummary = { total: 0, input: 0, output: 0, requests: 0, byPhase: [] };
  for (const m of [...ms].sort((a, b) => a.sequence - b.sequence)) {
    s.total += n(m.phase_total_tokens);
    s.input += n(m.phase_input_tokens);
    s.output += n(m.phase_output_tokens);
    s.requests += n(m.phase_request_count);
    const p = byPhase.get(m.phase) ?? { phase: m.phase, tokens: 0, milestones: 0 };
    p.tokens += n(m.phase_total_tokens);
    p.milestones += 1;
    byPhase.set(m.phase, p);
  }
  s.byPhase = [...byPhase.values()];
  return s;
}

export const isCancelled = (m: Pick<Milestone, 'is_cancelled' | 'status'>) =>
  m.is_cancelled === true || m.is_cancelled === 1 || m.status === 'cancelled';

/** A timeline row: one milestone, or the consecutive failed attempts of one step with one error. */
export interface TimelineRow {
  /** The last attempt (its actions and links are the row's). */
  milestone: Milestone;
  /** How many attempts the row stands for (1: an ordinary milestone). */
  attempts: number;
  firstSequence: number;
  tokens: { total: number; input: number; output: number; requests: number };
}

const sameFailure = (a: Milestone, b: Milestone) =>
  a.status === 'failed' &&
  b.status === 'failed' &&
  !isCancelled(a) &&
  !isCancelled(b) &&
  a.phase === b.phase &&
  a.kind === b.kind &&
  a.error === b.error &&
  b.attempt > a.attempt;

/**
 * The timeline's rows: retries of one step that failed the same way (same phase, kind and error,
 * attempt after attempt) are one row with their count and summed tokens, so five identical
 * `spawn claude ENOENT` rows read as one step tried five times. Anything else keeps its own row.
 */
export function timelineRows(ms: Milestone[]): TimelineRow[] {
  const rows: TimelineRow[] = [];
  for (const m of [...ms].sort((a, b) => a.sequence - b.sequence)) {
    const last = rows.at(-1);
    const tokens = {
      total: n(m.phase_total_tokens),
      input: n(m.phase_input_tokens),
      output: n(m.phase_output_tokens),
      requests: n(m.phase_request_count),
    };
    if (last && sameFailure(last.milestone, m)) {
      last.milestone = m;
      last.attempts += 1;
      for (const k of ['total', 'input', 'output', 'requests'] as const) last.tokens[k] += tokens[k];
    } else rows.push({ milestone: m, attempts: 1, firstSequence: m.sequence, tokens });
  }
  return rows;
}

// ---- failure explanation ------------------------------------------------------------------------

export interface FailureExplanation {
  /** The workflow's own error ("runner_failure: 5 attempts failed"). */
  summary: string;
  /** What went wrong, in words. */
  cause: string;
  /** What to do about it; null when the page knows no specific fix. */
  fix: string | null;
}

/**
 * Why a failed workflow failed and what fixes it, from its error and its last failed step's error
 * (the runner's structured message, e.g. "runner_failure: the CLI could not be started: spawn claude
 * ENOENT"). Retry stays offered: a fix on the server (installing the CLI) is made outside this page,
 * and retrying is then the way on; the fix says to do it first, and the API refuses a retry while the
 * CLI is still missing (services/autonomous/cli-check.ts), so a click too early says so in words.
 */
export function explainFailure(
  w: Pick<Workflow, 'status' | 'error' | 'cli_tool'>,
  ms: Milestone[],
): FailureExplanation | null {
  if (w.status !== 'failed' || !w.error) return null;
  const step = [...ms]
    .sort((a, b) => b.sequence - a.sequence)
    .find((m) => m.status === 'failed' && !isCancelled(m) && m.error);
  const detail = step?.error ?? w.error;
  const spawn = /spawn (\S+) (ENOENT|EACCES)/.exec(detail);
  const tool = w.cli_tool ? ` (${w.cli_tool})` : '';
  if (spawn?.[2] === 'ENOENT' || /could not be started.*ENOENT/.test(detail))
    return {
      summary: w.error,
      cause: `The CLI \`${spawn?.[1] ?? w.cli_tool ?? 'CLI'}\`${tool} was not found on the server, so no step could start.`,
      fix: "An administrator of the server must install it (npm run clis:install, or npm install -g with the tool's package) or set its path in autonomous.cli_paths; then Retry (until then the server refuses a retry, saying what is missing).",
    };
  if (spawn?.[2] === 'EACCES' || /not executable/.test(detail))
    return {
      summary: w.error,
      cause: `The CLI${spawn ? ` \`${spawn[1]}\`` : ''}${tool} is on the server but may not be run (permission denied).`,
      fix: 'An administrator of the server must make it executable for the service (and the agent account when isolation is on); then Retry.',
    };
  if (/sandbox unavailable/.test(detail))
    return {
      summary: w.error,
      cause: 'The sandbox the CLI runs in is not available on the server.',
      fix: 'An administrator must make the sandbox available (docs/operators/security.md "Security model") or set SVC_SANDBOX=off; then Retry.',
    };
  return { summary: w.error, cause: step?.error ?? w.error, fix: null };
}

// ---- live activity ------------------------------------------------------------------------------

export interface ActivityEntry {
  key: number;
  type: string;
  at: string | null;
  line: string | null;
  text: string;
}

export const MAX_ACTIVITY = 300;

/** One SSE event of the workflow's activity stream in words. */
export function describeActivity(type: string, d: Record<string, any>): string {
  switch (type) {
    case 'connected':
      return `Connected (status ${statusLabel(String(d.status ?? 'unknown'))})`;
    case 'keepalive':
      return 'Still connected';
    case 'assistant_text':
      return String(d.text ?? '');
    case 'tool_use': {
      const input = d.input == null ? '' : typeof d.input === 'string' ? d.input : JSON.stringify(d.input);
      return `Tool ${d.tool ?? '?'}${input ? `: ${input.length > 200 ? `${input.slice(0, 200)}…` : input}` : ''}`;
    }
    case 'usage': {
      const u = d.usage ?? {};
      const total = n(
        u.total ?? u.total_tokens ?? n(u.input ?? u.input_tokens) + n(u.output ?? u.output_tokens),
      );
      return `Usage: ${total.toLocaleString()} tokens`;
    }
    case 'retry':
      return `Retry, attempt ${d.attempt ?? '?'}`;
    case 'system':
      return d.subtype === 'status'
        ? `Status: ${statusLabel(String(d.status ?? ''))}`
        : `System: ${String(d.subtype ?? d.text ?? '')}`;
    case 'error':
      return `Error: ${String(d.text ?? d.subtype ?? 'unknown')}`;
    case 'milestone_updated':
      return `Milestone ${d.kind ? String(d.kind).replace(/_/g, ' ') : `(id ${d.milestone_id ?? '?'})`}${d.status ? `: ${String(d.status).replace(/_/g, ' ')}` : ''}`;
    default:
      return type;
  }
}

/** Appends an event, keeping the newest MAX_ACTIVITY; keepalives replace each other. */
export function appendActivity(
  list: ActivityEntry[],
  type: string,
  d: Record<string, any>,
  key: number,
): ActivityEntry[] {
  const entry: ActivityEntry = {
    key,
    type,
    at: typeof d?.at === 'string' ? d.at : null,
    line: typeof d?.line === 'string' ? d.line : null,
    text: describeActivity(type, d ?? {}),
  };
  const base = type === 'keepalive' && list.at(-1)?.type === 'keepalive' ? list.slice(0, -1) : list;
  const next = [...base, entry];
  return next.length > MAX_ACTIVITY ? next.slice(next.length - MAX_ACTIVITY) : next;
}

// ---- diffs --------------------------------------------------------------------------------------

export type DiffLineKind = 'file' | 'hunk' | 'add' | 'del' | 'meta' | 'context';

export function diffLines(diff: string): { kind: DiffLineKind; text: string }[] {
  if (!diff) return [];
  return diff.split('\n').map((text) => {
    let kind: DiffLineKind = 'context';
    if (text.startsWith('diff --git ')) kind = 'file';
    else if (text.startsWith('@@')) kind = 'hunk';
    else if (text.startsWith('+++ ') || text.startsWith('--- ') || text.startsWith('index ')) kind = 'meta';
    else if (text.startsWith('+')) kind = 'add';
    else if (text.startsWith('-')) kind = 'del';
    return { kind, text };
  });
}

/** The requirement a workflow was created with (from its frozen definition snapshot). */
export function requirementOf(w: Pick<Workflow, 'definition_snapshot' | 'title'>): string {
  const d = w.definition_snapshot ?? {};
  const r = (d as { requirement?: unknown }).requirement;
  if (typeof r === 'string') return r;
  if (r && typeof r === 'object') {
    const o = r as { text?: unknown; url?: unknown; number?: unknown };
    if (typeof o.text === 'string') return o.text;
    if (typeof o.url === 'string') return o.url;
    if (o.number != null) return `#${o.number}`;
  }
  return w.title ?? '';
}
