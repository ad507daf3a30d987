// The creation contract of autonomous workflows (issue 13 item 7; spec document 2 "Autonomous
// development", input shape rules) and the frozen `definition_snapshot` built from it. Pure.
//
//   one workflow: {requirement, project_path, cli_tool?, model?, branch_strategy?}
//   a batch:      {items: [{requirement, cli_tool?, model?}, ...] (1..50), project_path, cli_tool?, model?,
//                  branch_strategy?} -- a batch always uses `worktree` (another value is refused)
//
// `requirement` is text (1..20000 characters after trimming), an issue URL (https only; shape
// `https://<host>/<owner>/<repo>/issues/<n>` or GitLab's `.../-/issues/<n>`) or an issue number (`#123`
// or `123`). Every refusal is a 400 whose message starts with the field (`items.2.requirement: ...`),
// the format of domain/validation.ts. Every check is linear in the input (no backtracking regex).
// `project_path` is only shape-checked here; services/autonomous/projects.ts confines it to
// SVC_AUTONOMOUS_PROJECT_ROOTS.
import { z } from 'zod';
import { BadRequestError } from '../errors.ts';
import { LIMITS } from './limits.ts';

export const BRANCH_STRATEGIES = ['worktree', 'new_branch', 'current_branch'] as const;
export type BranchStrategy = (typeof BRANCH_STRATEGIES)[number];
export const DEFAULT_BRANCH_STRATEGY: BranchStrategy = 'worktree';

/**
 * CLI tools an autonomous workflow can run: the tools of domain/remote-cli-tools.ts (provider mapping)
 * and agent/adapters.ts (cli_alpha Qwen Code, cli_beta Claude Code, cli_gamma Codex, cli_delta Gemini).
 */
export const AUTONOMOUS_CLI_TOOLS = ['cli_alpha', 'cli_beta', 'cli_gamma', 'cli_delta'] as const;
export type AutonomousCliTool = (typeof AUTONOMOUS_CLI_TOOLS)[number];

/** A model name becomes a CLI argument: letters, digits and ._:/@+-, 1..100, starting alphanumeric. */
const MODEL_SHAPE = /^[A-Za-z0-9][A-Za-z0-9._:/@+-]*$/;
export const MODEL_RULE = `must be 1-${LIMITS.modelMaxChars} letters, digits or ._:/@+- starting with a letter or digit`;

export type Requirement =
  | { kind: 'text'; text: string }
  | { kind: 'issue_url'; url: string; host: string; number: number }
  | { kind: 'issue_number'; number: number };

const MAX_ISSUE_NUMBER = 2_147_483_647;
const ISSUE_NUMBER_SHAPE = /^#?[0-9]+$/;
const WHITESPACE = /\s/;

/** Classifies a requirement; a string result is the refusal (without the field name). */
export function classifyRequirement(raw: string): Requirement | string {
  const text = raw.trim();
  if (text.length === 0) return 'must not be empty';
  if (text.length > LIMITS.requirementMaxChars)
    return `must be at most ${LIMITS.requirementMaxChars} characters`;
  if (ISSUE_NUMBER_SHAPE.test(text)) {
    const digits = text.startsWith('#') ? text.slice(1) : text;
    const number = digits.length > 10 ? Number.POSITIVE_INFINITY : Number(digits);
    if (number < 1 || number > MAX_ISSUE_NUMBER) return 'issue number must be between 1 and 2147483647';
    return { kind: 'issue_number', number };
  }
  const lower = text.slice(0, 8).toLowerCase();
  const looksLikeUrl =
    !WHITESPACE.test(text) && (lower.startsWith('https://') || lower.startsWith('http://'));
  if (!looksLikeUrl) return { kind: 'text', text };
  return classifyIssueUrl(text);
}

const ISSUE_URL_RULE = 'issue URL must look like https://<host>/<owner>/<repo>/issues/<number>';

function classifyIssueUrl(text: string): Requirement | string {
  if (text.length > 2048) return 'issue URL must be at most 2048 characters';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return ISSUE_URL_RULE;
  }
  if (url.protocol !== 'https:') return 'issue URL must use https';
  if (url.username !== '' || url.password !== '') return 'issue URL must not carry credentials';
  if (url.hostname === '') return ISSUE_URL_RULE;
  const segments = url.pathname.split('/').slice(1);
  if (segments.at(-1) === '') segments.pop();
  // owner, repo, "issues", number at least; no empty segment; GitLab puts "-" before "issues".
  if (segments.length < 4 || segments.some((s) => s === '' || s === '.' || s === '..')) return ISSUE_URL_RULE;
  const numberText = segments.at(-1)!;
  if (segments.at(-2) !== 'issues' || !/^[0-9]{1,10}$/.test(numberText)) return ISSUE_URL_RULE;
  const number = Number(numberText);
  if (number < 1 || number > MAX_ISSUE_NUMBER) return 'issue number must be between 1 and 2147483647';
  return { kind: 'issue_url', url: `${url.origin}${url.pathname}`, host: url.host, number };
}

const requirementField = z.string().transform((v, ctx) => {
  const r = classifyRequirement(v);
  if (typeof r === 'string') {
    ctx.addIssue({ code: 'custom', message: r });
    return z.NEVER;
  }
  return r;
});

const cliToolField = z.enum(AUTONOMOUS_CLI_TOOLS, {
  error: `must be one of ${AUTONOMOUS_CLI_TOOLS.join(', ')}`,
});
const modelField = z
  .string()
  .min(1, MODEL_RULE)
  .max(LIMITS.modelMaxChars, MODEL_RULE)
  .refine((v) => MODEL_SHAPE.test(v), MODEL_RULE);
const projectPathField = z
  .string()
  .min(1, 'must not be empty')
  .max(500, 'must be at most 500 characters')
  .refine((v) => !v.includes('\0'), 'must not contain NUL')
  .refine((v) => v.startsWith('/'), 'must be an absolute path');
const branchStrategyField = z.enum(BRANCH_STRATEGIES, {
  error: `must be one of ${BRANCH_STRATEGIES.join(', ')}`,
});

const singleSchema = z.object({
  requirement: requirementField,
  project_path: projectPathField,
  cli_tool: cliToolField.optional(),
  model: modelField.optional(),
  branch_strategy: branchStrategyField.optional(),
});

const itemSchema = z.object({
  requirement: requirementField,
  cli_tool: cliToolField.optional(),
  model: modelField.optional(),
});

const batchSchema = z.object({
  items: z
    .array(itemSchema, { error: 'must be a list of {requirement, cli_tool?, model?}' })
    .min(1, 'must hold at least 1 item')
    .max(LIMITS.batchMaxItems, `must hold at most ${LIMITS.batchMaxItems} items`),
  project_path: projectPathField,
  cli_tool: cliToolField.optional(),
  model: modelField.optional(),
  branch_strategy: z.literal('worktree', { error: 'a batch always uses worktree' }).optional(),
});

/** The two body shapes parseCreateInput accepts (`items` present: a batch), for the API document. */
export const CREATE_BODY_SCHEMAS = { single: singleSchema, batch: batchSchema } as const;

export interface CreateItem {
  requirement: Requirement;
  cliTool?: AutonomousCliTool;
  model?: string;
}

export type CreateInput =
  | { kind: 'single'; projectPath: string; item: CreateItem; branchStrategy: BranchStrategy }
  | { kind: 'batch'; projectPath: string; items: CreateItem[]; branchStrategy: 'worktree' };

function fail(error: z.ZodError): never {
  const issue = error.issues[0]!;
  const field = issue.path.join('.');
  throw new BadRequestError(field ? `${field}: ${issue.message}` : issue.message);
}

const optionalItem = (v: { cli_tool?: AutonomousCliTool; model?: string }) => ({
  ...(v.cli_tool !== undefined ? { cliTool: v.cli_tool } : {}),
  ...(v.model !== undefined ? { model: v.model } : {}),
});

/** Parses a creation body; throws BadRequestError (400) naming the field. */
export function parseCreateInput(body: unknown): CreateInput {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new BadRequestError('body must be a JSON object');
  const b = body as Record<string, unknown>;
  if (b.items !== undefined) {
    if (b.requirement !== undefined)
      throw new BadRequestError('requirement: give either requirement or items, not both');
    const r = batchSchema.safeParse(b);
    if (!r.success) fail(r.error);
    const shared = optionalItem(r.data);
    return {
      kind: 'batch',
      projectPath: r.data.project_path,
      branchStrategy: 'worktree',
      items: r.data.items.map((i) => ({ ...shared, requirement: i.requirement, ...optionalItem(i) })),
    };
  }
  const r = singleSchema.safeParse(b);
  if (!r.success) fail(r.error);
  return {
    kind: 'single',
    projectPath: r.data.project_path,
    branchStrategy: r.data.branch_strategy ?? DEFAULT_BRANCH_STRATEGY,
    item: { requirement: r.data.requirement, ...optionalItem(r.data) },
  };
}

// --- definition_snapshot: what a workflow was created to do, frozen at creation (versioned JSON) ---

export const DEFINITION_SNAPSHOT_VERSION = 1;

export interface DefinitionSnapshot {
  version: 1;
  requirement: Requirement;
  project: { id: number; path: string };
  cliTool: string;
  model: string | null;
  branchStrategy: BranchStrategy;
  /** Batch info: the batch id, this item's 0-based position, and the batch size. */
  batch: { batchId: string; position: number; count: number } | null;
  /** The fork source, for a workflow forked at a milestone. */
  forkedFrom: { workflowId: string; milestoneId: number } | null;
  createdAt: string;
}

const requirementSnapshotSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('text'), text: z.string().min(1) }),
  z.object({
    kind: z.literal('issue_url'),
    url: z.string().min(1),
    host: z.string().min(1),
    number: z.number().int(),
  }),
  z.object({ kind: z.literal('issue_number'), number: z.number().int() }),
]);

const snapshotSchema = z.object({
  version: z.literal(DEFINITION_SNAPSHOT_VERSION),
  requirement: requirementSnapshotSchema,
  project: z.object({ id: z.number().int(), path: z.string().min(1) }),
  cliTool: z.string().min(1),
  model: z.string().nullable(),
  branchStrategy: z.enum(BRANCH_STRATEGIES),
  batch: z
    .object({ batchId: z.string().min(1), position: z.number().int().min(0), count: z.number().int().min(1) })
    .nullable(),
  forkedFrom: z.object({ workflowId: z.string().min(1), milestoneId: z.number().int() }).nullable(),
  createdAt: z.string().min(1),
});

export function buildDefinitionSnapshot(d: {
  requirement: Requirement;
  project: { id: number; path: string };
  cliTool: string;
  model?: string | null;
  branchStrategy: BranchStrategy;
  batch?: DefinitionSnapshot['batch'];
  forkedFrom?: DefinitionSnapshot['forkedFrom'];
  createdAt: Date;
}): string {
  const snapshot: DefinitionSnapshot = {
    version: DEFINITION_SNAPSHOT_VERSION,
    requirement: d.requirement,
    project: d.project,
    cliTool: d.cliTool,
    model: d.model ?? null,
    branchStrategy: d.branchStrategy,
    batch: d.batch ?? null,
    forkedFrom: d.forkedFrom ?? null,
    createdAt: d.createdAt.toISOString(),
  };
  return JSON.stringify(snapshot);
}

/** Reads a stored snapshot; throws on anything that is not a snapshot of a known version. */
export function parseDefinitionSnapshot(json: string): DefinitionSnapshot {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw new Error('definition_snapshot is not JSON');
  }
  const version = (raw as { version?: unknown } | null)?.version;
  if (version !== DEFINITION_SNAPSHOT_VERSION)
    throw new Error(`definition_snapshot version ${String(version)} is not supported`);
  const r = snapshotSchema.safeParse(raw);
  if (!r.success) throw new Error(`definition_snapshot is malformed at ${r.error.issues[0]!.path.join('.')}`);
  return r.data as DefinitionSnapshot;
}

/** A short title for lists: the text's first line (cut), or the issue reference. */
export function requirementTitle(r: Requirement): string {
  switch (r.kind) {
    case 'text': {
      const first = r.text.split('\n', 1)[0]!.trim();
      return first.length > 120 ? `${first.slice(0, 117)}...` : first;
    }
    case 'issue_url':
      return `${r.host} issue #${r.number}`;
    case 'issue_number':
      return `issue #${r.number}`;
  }
}
