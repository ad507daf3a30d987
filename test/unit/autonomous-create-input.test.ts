// The creation contract (domain/autonomous/create-input.ts): every field's refusal names the field
// (400), requirement classification (text, issue URL, issue number), batches, and the frozen
// definition_snapshot round trip. Also the limits read from settings (domain/autonomous/limits.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadSettings } from '../../config/settings.ts';
import {
  buildDefinitionSnapshot,
  classifyRequirement,
  parseCreateInput,
  parseDefinitionSnapshot,
  requirementTitle,
} from '../../domain/autonomous/create-input.ts';
import { autonomousLimits, LIMITS } from '../../domain/autonomous/index.ts';
import { BadRequestError } from '../../domain/errors.ts';

const P = '/srv/projects/demo';

function rejects(body: unknown, message: RegExp) {
  assert.throws(
    () => parseCreateInput(body),
    (e: unknown) => {
      assert.ok(e instanceof BadRequestError, `expected BadRequestError, got ${String(e)}`);
      assert.equal(e.status, 400);
      assert.match(e.message, message);
      return true;
    },
  );
}

test('one workflow: defaults and optional fields', () => {
  const a = parseCreateInput({ requirement: '  Add a --json flag to the CLI  ', project_path: P });
  assert.deepEqual(a, {
    kind: 'single',
    projectPath: P,
    branchStrategy: 'worktree',
    item: { requirement: { kind: 'text', text: 'Add a --json flag to the CLI' } },
  });
  const b = parseCreateInput({
    requirement: '#42',
    project_path: P,
    cli_tool: 'cli_gamma',
    model: 'gpt-5.1-codex',
    branch_strategy: 'current_branch',
  });
  assert.deepEqual(b, {
    kind: 'single',
    projectPath: P,
    branchStrategy: 'current_branch',
    item: { requirement: { kind: 'issue_number', number: 42 }, cliTool: 'cli_gamma', model: 'gpt-5.1-codex' },
  });
  for (const s of ['worktree', 'new_branch', 'current_branch'])
    assert.equal(
      (parseCreateInput({ requirement: 'x', project_path: P, branch_strategy: s }) as any).branchStrategy,
      s,
    );
});

test('requirement: text, issue URL or number; every refusal names the field', () => {
  assert.deepEqual(classifyRequirement('123'), { kind: 'issue_number', number: 123 });
  assert.deepEqual(classifyRequirement('#7'), { kind: 'issue_number', number: 7 });
  assert.deepEqual(classifyRequirement('https://git.example.com/acme/app/issues/12'), {
    kind: 'issue_url',
    url: 'https://git.example.com/acme/app/issues/12',
    host: 'git.example.com',
    number: 12,
  });
  assert.deepEqual(classifyRequirement('https://gitlab.example.com/group/sub/app/-/issues/3/'), {
    kind: 'issue_url',
    url: 'https://gitlab.example.com/group/sub/app/-/issues/3/',
    host: 'gitlab.example.com',
    number: 3,
  });
  // A sentence that mentions a URL is text.
  assert.equal((classifyRequirement('see https://x.example/a b') as any).kind, 'text');
  rejects({ project_path: P }, /^requirement: /);
  rejects({ requirement: 5, project_path: P }, /^requirement: /);
  rejects({ requirement: '   ', project_path: P }, /^requirement: must not be empty/);
  rejects(
    { requirement: 'x'.repeat(20_001), project_path: P },
    /^requirement: must be at most 20000 characters/,
  );
  assert.doesNotThrow(() => parseCreateInput({ requirement: 'x'.repeat(20_000), project_path: P }));
  rejects({ requirement: '#0', project_path: P }, /^requirement: issue number must be between/);
  rejects({ requirement: '99999999999', project_path: P }, /^requirement: /);
  rejects(
    { requirement: 'http://git.example.com/a/b/issues/1', project_path: P },
    /^requirement: issue URL must use https/,
  );
  rejects(
    { requirement: 'https://git.example.com/a/b/pulls/1', project_path: P },
    /^requirement: issue URL must look like/,
  );
  rejects(
    { requirement: 'https://git.example.com/issues/1', project_path: P },
    /^requirement: issue URL must look like/,
  );
  rejects(
    { requirement: 'https://git.example.com/a//issues/1', project_path: P },
    /^requirement: issue URL must look like/,
  );
  rejects(
    { requirement: 'https://git.example.com/a/b/issues/x1', project_path: P },
    /^requirement: issue URL must look like/,
  );
  rejects(
    { requirement: 'https://u:p@git.example.com/a/b/issues/1', project_path: P },
    /^requirement: issue URL must not carry credentials/,
  );
  rejects({ requirement: 'https://', project_path: P }, /^requirement: issue URL must look like/);
});

test('requirement checks stay linear on hostile input', () => {
  const hostile = [
    `https://${'a/'.repeat(10_000)}`,
    `#${'9'.repeat(19_000)}`,
    `${' '.repeat(19_000)}x`,
    `https://h/${'/'.repeat(2000)}issues/1`,
  ];
  const started = process.hrtime.bigint();
  for (const h of hostile) {
    try {
      parseCreateInput({ requirement: h, project_path: P });
    } catch {
      // refusals are fine; only the time matters
    }
  }
  assert.ok(Number(process.hrtime.bigint() - started) / 1e6 < 500);
});

test('project_path, cli_tool, model, branch_strategy: 400 naming the field', () => {
  rejects({ requirement: 'x' }, /^project_path: /);
  rejects({ requirement: 'x', project_path: '' }, /^project_path: must not be empty/);
  rejects({ requirement: 'x', project_path: 'relative/dir' }, /^project_path: must be an absolute path/);
  rejects({ requirement: 'x', project_path: `/a\0b` }, /^project_path: must not contain NUL/);
  rejects({ requirement: 'x', project_path: `/${'a'.repeat(500)}` }, /^project_path: must be at most 500/);
  rejects(
    { requirement: 'x', project_path: P, cli_tool: 'bash' },
    /^cli_tool: must be one of cli_alpha, cli_beta/,
  );
  rejects({ requirement: 'x', project_path: P, cli_tool: '' }, /^cli_tool: /);
  rejects({ requirement: 'x', project_path: P, model: '' }, /^model: must be 1-100/);
  rejects({ requirement: 'x', project_path: P, model: 'm'.repeat(101) }, /^model: /);
  rejects({ requirement: 'x', project_path: P, model: '-rf' }, /^model: /);
  rejects({ requirement: 'x', project_path: P, model: 'gpt 5' }, /^model: /);
  rejects({ requirement: 'x', project_path: P, model: 'a;b' }, /^model: /);
  assert.doesNotThrow(() => parseCreateInput({ requirement: 'x', project_path: P, model: 'm'.repeat(100) }));
  rejects(
    { requirement: 'x', project_path: P, branch_strategy: 'main' },
    /^branch_strategy: must be one of worktree, new_branch, current_branch/,
  );
  rejects(null, /body must be a JSON object/);
  rejects([1], /body must be a JSON object/);
});

test('a batch: 1..50 items, shared tool and model, per-item override, always worktree', () => {
  const b = parseCreateInput({
    items: [
      { requirement: 'one' },
      { requirement: '#2', cli_tool: 'cli_alpha' },
      { requirement: 'three', model: 'm2' },
    ],
    project_path: P,
    cli_tool: 'cli_beta',
    model: 'm1',
  });
  assert.equal(b.kind, 'batch');
  if (b.kind !== 'batch') return;
  assert.equal(b.branchStrategy, 'worktree');
  assert.deepEqual(b.items, [
    { requirement: { kind: 'text', text: 'one' }, cliTool: 'cli_beta', model: 'm1' },
    { requirement: { kind: 'issue_number', number: 2 }, cliTool: 'cli_alpha', model: 'm1' },
    { requirement: { kind: 'text', text: 'three' }, cliTool: 'cli_beta', model: 'm2' },
  ]);
  assert.equal(
    parseCreateInput({ items: [{ requirement: 'a' }], project_path: P, branch_strategy: 'worktree' }).kind,
    'batch',
  );
  rejects({ items: [], project_path: P }, /^items: must hold at least 1 item/);
  rejects(
    { items: Array.from({ length: 51 }, () => ({ requirement: 'a' })), project_path: P },
    /^items: must hold at most 50/,
  );
  assert.doesNotThrow(() =>
    parseCreateInput({ items: Array.from({ length: 50 }, () => ({ requirement: 'a' })), project_path: P }),
  );
  rejects({ items: 'a', project_path: P }, /^items: /);
  rejects(
    { items: [{ requirement: 'ok' }, { requirement: ' ' }], project_path: P },
    /^items\.1\.requirement: must not be empty/,
  );
  rejects({ items: [{ requirement: 'ok', cli_tool: 'zsh' }], project_path: P }, /^items\.0\.cli_tool: /);
  rejects({ items: [{ requirement: 'ok', model: 'a b' }], project_path: P }, /^items\.0\.model: /);
  rejects(
    { items: [{ requirement: 'ok' }], project_path: P, branch_strategy: 'new_branch' },
    /^branch_strategy: a batch always uses worktree/,
  );
  rejects(
    { items: [{ requirement: 'ok' }], requirement: 'x', project_path: P },
    /^requirement: give either requirement or items/,
  );
  rejects({ items: [{ requirement: 'ok' }] }, /^project_path: /);
});

test('definition_snapshot: versioned JSON round trip; unknown versions and malformed text refused', () => {
  const json = buildDefinitionSnapshot({
    requirement: { kind: 'issue_url', url: 'https://h/a/b/issues/1', host: 'h', number: 1 },
    project: { id: 3, path: P },
    cliTool: 'cli_beta',
    branchStrategy: 'worktree',
    batch: { batchId: 'b1', position: 1, count: 3 },
    createdAt: new Date('2026-01-02T03:04:05Z'),
  });
  const s = parseDefinitionSnapshot(json);
  assert.deepEqual(s, {
    version: 1,
    requirement: { kind: 'issue_url', url: 'https://h/a/b/issues/1', host: 'h', number: 1 },
    project: { id: 3, path: P },
    cliTool: 'cli_beta',
    model: null,
    branchStrategy: 'worktree',
    batch: { batchId: 'b1', position: 1, count: 3 },
    forkedFrom: null,
    createdAt: '2026-01-02T03:04:05.000Z',
  });
  assert.throws(() => parseDefinitionSnapshot('{'), /not JSON/);
  assert.throws(
    () => parseDefinitionSnapshot(JSON.stringify({ ...s, version: 2 })),
    /version 2 is not supported/,
  );
  assert.throws(
    () => parseDefinitionSnapshot(JSON.stringify({ ...s, branchStrategy: 'x' })),
    /malformed at branchStrategy/,
  );
  assert.equal(requirementTitle({ kind: 'text', text: 'First line\nsecond' }), 'First line');
  assert.equal(requirementTitle({ kind: 'issue_number', number: 9 }), 'issue #9');
});

test('limits: spec defaults from settings; the deprecated alias is honoured; env names', () => {
  const base = { SVC_DATA_DIR: '/tmp/x' } as NodeJS.ProcessEnv;
  const d = autonomousLimits(loadSettings(base));
  assert.deepEqual(d, {
    maxConcurrentWorkflows: 10,
    acceptanceVerificationEnabled: true,
    planningTimeoutSeconds: 1800,
    taskTimeoutSeconds: 3600,
    maxChangedFiles: 60,
    ciRepairAttempts: 5,
    cgroup: 'auto',
  });
  // one place for each figure: the settings defaults are the LIMITS constants
  assert.equal(d.maxConcurrentWorkflows, LIMITS.maxConcurrentWorkflows);
  assert.equal(d.planningTimeoutSeconds, LIMITS.planningTimeoutSeconds);
  assert.equal(d.taskTimeoutSeconds, LIMITS.taskTimeoutSeconds);
  assert.equal(d.maxChangedFiles, LIMITS.maxChangedFiles);
  assert.equal(d.ciRepairAttempts, LIMITS.ciRepairAttempts);
  const e = autonomousLimits(
    loadSettings({
      ...base,
      AUTONOMOUS_TASK_TIMEOUT: '120',
      AUTONOMOUS_MAX_CHANGED_FILES: '7',
      SVC_AUTONOMOUS__MAX_CONCURRENT_WORKFLOWS: '3',
      SVC_AUTONOMOUS__ACCEPTANCE_VERIFICATION_ENABLED: 'false',
      SVC_AUTONOMOUS__AGENT_TASK_CGROUP_ENABLED: 'off',
    }),
  );
  assert.equal(e.taskTimeoutSeconds, 120);
  assert.equal(e.maxChangedFiles, 7);
  assert.equal(e.maxConcurrentWorkflows, 3);
  assert.equal(e.acceptanceVerificationEnabled, false);
  assert.equal(e.cgroup, 'off');
  const both = loadSettings({
    ...base,
    SVC_AUTONOMOUS__MAX_CONCURRENT_WORKFLOWS: '3',
    SVC_AUTONOMOUS__AGENT_MAX_CONCURRENT_WORKFLOWS: '12',
  });
  assert.equal(autonomousLimits(both).maxConcurrentWorkflows, 12);
  assert.throws(() => loadSettings({ ...base, SVC_AUTONOMOUS__AGENT_TASK_CGROUP_ENABLED: 'maybe' }));
});
