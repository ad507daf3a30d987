// Shared setup of the autonomous workflow end-to-end tests: the runner world (real API and model
// proxy, mock provider behind a stored key, the scripted fake CLI as cli_beta) with a real Temporal
// worker, a project repository under the project roots whose `.svc-fake/script.json` scripts each step
// (fake-autonomous-cli.mjs `byStep`), and helpers to create, start and watch workflows.
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { WorkflowHandle } from '@temporalio/client';
import { milestonesRepository } from '../../../db/repositories/autonomous/milestones.ts';
import { type WorkflowRow, workflowsRepository } from '../../../db/repositories/autonomous/workflows.ts';
import { createAutonomousWorkflows } from '../../../services/autonomous/create-workflows.ts';
import { tenantProjectRoot } from '../../../services/autonomous/projects.ts';
import { AUTONOMOUS_WORKFLOW_TYPE, temporalWorkflowId } from '../../../workflows/autonomous/contract.ts';
import { gitIn } from '../../fixtures/git-repo.ts';
import { uniqueName } from '../../support/actors.ts';
import { nodeEntry } from '../../support/node-entry.ts';
import { FAKE_CLI, type RunnerWorld, startRunnerWorld } from './runner-support.ts';

/** The milestones of a workflow that went straight through (no CI repair, no feedback). */
export const HAPPY_KINDS = [
  'plan',
  'plan_review',
  'implementation',
  'test',
  'pr_review',
  'report',
  'merge',
  'acceptance_verification',
];

export type Script = Record<
  string,
  { steps: unknown[]; final?: string; pidFile?: string; promptFile?: string }
>;

/** Every step answers with one model call and a text; the overrides replace whole steps. */
export function stepScript(overrides: Script = {}): Script {
  const say = (text: string) => ({ steps: [{ call: 1 }, { text }] });
  return {
    plan: say('1. write app.txt with the word fixed'),
    plan_review: say('The plan is fine.\nVERDICT: approved'),
    implementation: {
      steps: [{ call: 1 }, { write: { path: 'app.txt', content: 'fixed\n' } }, { text: 'implemented' }],
    },
    test: say('tests pass'),
    pr_review: say('Looks good.\nVERDICT: approved'),
    report: say('Summary: app.txt now says fixed.'),
    ci_diagnosis: {
      steps: [{ call: 1 }, { write: { path: 'app.txt', content: 'fixed\n' } }, { text: 'repaired' }],
    },
    conflict_repair: say('resolved'),
    acceptance_verification: say('The requirement is met.\nVERDICT: confirmed'),
    ...overrides,
  };
}

export interface WorkflowWorld extends RunnerWorld {
  /** A new project repository (committed) with this script and a CI that checks app.txt. */
  project(script: Script, extraFiles?: Record<string, string>): string;
  create(projectPath: string, body?: Record<string, unknown>): Promise<WorkflowRow[]>;
  start(workflowId: string): Promise<void>;
  /** The Temporal handle of the workflow (for its updates, queries and result). */
  handle(workflowId: string): Promise<WorkflowHandle>;
  row(workflowId: string): Promise<WorkflowRow>;
  waitFor(
    workflowId: string,
    pred: (r: WorkflowRow) => boolean,
    what: string,
    timeoutMs?: number,
  ): Promise<WorkflowRow>;
  milestones(workflowId: string): ReturnType<ReturnType<typeof milestonesRepository>['list']>;
  /** The default branch tip's file in the project's bare forge repository. */
  mergedFile(projectId: number, file: string): string | null;
}

/**
 * The env of a world whose scripts write pid files into the test file's private temp directory: it
 * runs unisolated, set explicitly (the agent account cannot write there, and `auto` would use the
 * account wherever it exists). Isolated workflows: isolation-workflow.test.ts.
 */
export const UNISOLATED: Record<string, string> = { SVC_AUTONOMOUS_ISOLATION: 'off' };

/**
 * Tests that watch the CLI from outside (pid files and prompt files in the test's own temp dir, host
 * pids of its processes) run it unconfined: inside the sandbox those paths are its private tmpfs and its
 * pids are its namespace's. What they check (workflow controls, crashes, prompts) does not depend on
 * the sandbox; the sandbox's own pause, cancel, timeout and confinement are in runner.test.ts and
 * sandbox.test.ts.
 */
export const UNCONFINED: Record<string, string> = { ...UNISOLATED, SVC_SANDBOX: 'off' };

/**
 * Shorter runner waits (config/settings.ts; the same reads and signals, sooner): what the proxy wrote
 * for a finished step (usage rows, a failed attempt's provider-error fact) is re-read every 25 ms, not
 * 250 ms (a failed attempt without a fact waited 2 s); a running step reads its workflow's status
 * (pause, stop) every 200 ms, not 1 s; and it heartbeats every 250 ms, each heartbeat sent at once, so
 * a cancelled step (cancel-round, planning timeout) is stopped within a fraction of a second, not up
 * to 12 s later (the SDK's heartbeat throttle).
 */
export const FAST_RUNNER: Record<string, string> = {
  SVC_AUTONOMOUS__RUNNER_SETTLE_POLL_MS: '25',
  SVC_AUTONOMOUS__RUNNER_POLL_MS: '200',
  SVC_AUTONOMOUS__RUNNER_HEARTBEAT_MS: '250',
  SVC_TEMPORAL_HEARTBEAT_THROTTLE_MS: '250',
};

/**
 * For tests that kill a worker: Temporal gives a dead worker's CLI step or CI run up after 8 s without
 * a heartbeat instead of 15 s / 20 s (autonomous.heartbeat_timeout_seconds), then runs it again on the
 * next worker. The live runner heartbeats every 250 ms (FAST_RUNNER), the CI activity every 2 s.
 */
export const WORKER_KILL: Record<string, string> = { SVC_AUTONOMOUS__HEARTBEAT_TIMEOUT_SECONDS: '8' };

export async function startWorkflowWorld(
  opts: { worker?: boolean; env?: Record<string, string> } = {},
): Promise<WorkflowWorld> {
  const world = await startRunnerWorld({
    worker: opts.worker ?? true,
    env: { ...FAST_RUNNER, ...opts.env },
  });
  const { app } = world;
  const workflows = workflowsRepository(app.database);
  const milestones = milestonesRepository(app.database);
  // The tenant's own folder under the default root (services/autonomous/projects.ts).
  const root = tenantProjectRoot(path.join(app.settings.SVC_DATA_DIR, 'projects'), world.tenantId);
  const user = { id: world.userId, tenantId: world.tenantId };
  return {
    ...world,
    project(script, extraFiles = {}) {
      const dir = path.join(root, uniqueName('project'));
      mkdirSync(path.join(dir, '.svc-fake'), { recursive: true });
      mkdirSync(path.join(dir, '.svc'), { recursive: true });
      gitIn(dir, 'init', '-q', '-b', 'main');
      writeFileSync(path.join(dir, 'app.txt'), 'broken\n');
      writeFileSync(
        path.join(dir, 'ci.sh'),
        'grep -q fixed app.txt || { echo "app.txt is not fixed"; exit 1; }\n',
      );
      writeFileSync(path.join(dir, '.svc', 'ci'), 'sh ci.sh\n');
      writeFileSync(path.join(dir, '.svc-fake', 'script.json'), JSON.stringify({ byStep: script }));
      for (const [f, content] of Object.entries(extraFiles)) writeFileSync(path.join(dir, f), content);
      gitIn(dir, 'add', '-A');
      gitIn(dir, 'commit', '-q', '-m', 'initial');
      return dir;
    },
    async create(projectPath, body = {}) {
      const r = await createAutonomousWorkflows(
        { database: app.database, settings: app.settings, now: () => new Date() },
        user,
        { requirement: 'Make app.txt say fixed', project_path: projectPath, cli_tool: 'cli_beta', ...body },
      );
      return r.kind === 'single' ? [r.workflow] : r.workflows;
    },
    async start(workflowId) {
      const client = await app.deps.temporal.client();
      await client.workflow.start(AUTONOMOUS_WORKFLOW_TYPE, {
        taskQueue: app.settings.TEMPORAL_TASK_QUEUE,
        workflowId: temporalWorkflowId(workflowId),
        args: [{ workflowId }],
      });
    },
    async handle(workflowId) {
      const client = await app.deps.temporal.client();
      return client.workflow.getHandle(temporalWorkflowId(workflowId));
    },
    async row(workflowId) {
      const r = await workflows.find(workflowId);
      assert.ok(r, `workflow ${workflowId} exists`);
      return r;
    },
    async waitFor(workflowId, pred, what, timeoutMs = 90_000) {
      const deadline = Date.now() + timeoutMs;
      let last: WorkflowRow | undefined;
      while (Date.now() < deadline) {
        last = await workflows.find(workflowId);
        if (last && pred(last)) return last;
        await sleep(100);
      }
      const ms = await milestones.list(workflowId);
      throw new Error(
        `workflow ${workflowId} never reached ${what}: status ${last?.status} phase ${last?.currentPhase} error ${last?.error}\n` +
          ms.map((m) => `  ${m.sequence} ${m.kind} ${m.status} ${m.error ?? ''}`).join('\n'),
      );
    },
    milestones: (workflowId) => milestones.list(workflowId),
    mergedFile(projectId, file) {
      const gitDir = path.join(app.settings.dataDir, 'forge', `${projectId}.git`);
      try {
        return execFileSync('git', ['--git-dir', gitDir, 'show', `main:${file}`]).toString();
      } catch {
        return null;
      }
    },
  };
}

/**
 * `npm run worker` as its own process against the world's database and task queue (the world started
 * with `worker: false`: its API hosts no worker), with the scripted fake CLI as cli_beta and `env` on
 * top. The caller kills it (it is also pushed to `children`).
 */
export function launchWorkerProcess(
  world: RunnerWorld,
  children: ChildProcess[],
  env: Record<string, string> = {},
): { child: ChildProcess; output: () => string } {
  const s = world.app.settings;
  const child = spawn(process.execPath, nodeEntry('bin/worker.ts'), {
    env: {
      ...process.env,
      SVC_DATA_DIR: s.SVC_DATA_DIR,
      DATABASE_URL: s.DATABASE_URL ?? '',
      TEMPORAL_ADDRESS: s.TEMPORAL_ADDRESS ?? '',
      TEMPORAL_TASK_QUEUE: s.TEMPORAL_TASK_QUEUE,
      SVC_ENCRYPTION_KEY: 'test-encryption-key',
      SECRET_KEY: 'test-secret-key',
      SVC_UPLOAD_AUTH_KEY: 'test-upload-key',
      SVC_AUTONOMOUS__CLI_PATHS: JSON.stringify({ cli_beta: FAKE_CLI }),
      SVC_AUTONOMOUS__PROXY_BASE_URL: world.app.url,
      SVC_TEMPORAL_DEV_PORT: '0',
      SVC_TEMPORAL_UI_PORT: '0',
      LOG_LEVEL: 'warn',
      ...FAST_RUNNER,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (b) => (out += b));
  child.stderr!.on('data', (b) => (out += b));
  return { child, output: () => out };
}
