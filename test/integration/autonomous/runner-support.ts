// Shared setup of the autonomous runner tests: the real API (model proxy) and database, the mock
// model provider behind a tenant's stored Anthropic key, a user of that tenant owning workflows, the
// scripted fake CLI (test/fixtures/fake-autonomous-cli.mjs) configured as cli_beta, and git worktrees.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { eq } from 'drizzle-orm';
import { type MockProvider, startMockProvider } from '../../fixtures/mock-provider.ts';
import { createTenant, createUser } from '../../support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../../support/harness.ts';
import { hostPidOf } from '../../support/sandbox-pids.ts';
import { api, login } from '../../support/session.ts';
import { exitIfStuck, inTestGroup } from '../../support/test-groups.ts';

export const FAKE_CLI = path.resolve('test/fixtures/fake-autonomous-cli.mjs');
/**
 * Every autonomous tool configured as the fake CLI: creation refuses a tool whose CLI is not installed
 * (services/autonomous/cli-check.ts), and tests that never run the CLI still create with any tool.
 */
export const FAKE_CLI_PATHS: Record<string, string> = Object.fromEntries(
  ['cli_alpha', 'cli_beta', 'cli_gamma', 'cli_delta'].map((t) => [t, FAKE_CLI]),
);

export interface RunnerWorld {
  app: TestApp;
  mock: MockProvider;
  tenantId: number;
  userId: number;
  /** The user's login (password PASSWORD of test/support/actors.ts). */
  username: string;
  close(): Promise<void>;
}

export async function startRunnerWorld(
  opts: { worker?: boolean; env?: Record<string, string> } = {},
): Promise<RunnerWorld> {
  const app = await startTestApp({ worker: opts.worker, env: opts.env });
  // The CLIs reach the proxy at the API's real address (known only after listen), and cli_beta is
  // the scripted fake.
  app.settings.autonomous.proxy_base_url = app.url;
  app.settings.autonomous.cli_paths = { cli_beta: FAKE_CLI };
  const mock = await startMockProvider();
  const admin = await login(app.url, ADMIN.username, ADMIN.password);
  const tenantId = await createTenant(app, admin);
  const r = await api(app.url, 'POST', '/api/remote/api-keys', {
    auth: admin,
    body: {
      provider: 'anthropic',
      key_name: 'runner test key',
      api_key: 'real-anthropic-key-0123456789',
      base_url: mock.url,
      tenant_id: tenantId,
    },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const user = await createUser(app, admin, { role: 'user', tenant_id: tenantId });
  return {
    app,
    mock,
    tenantId,
    userId: user.id,
    username: user.username,
    async close() {
      // Armed first: a close that never finishes is caught too. In a group of files the group's own
      // guard does this once its last file has ended (test/support/test-groups.ts).
      if (!inTestGroup()) exitIfStuck('after the world began closing');
      await mock.close();
      await app.close();
    },
  };
}

// One world per test file, closed in its `after`: once it is closed nothing of this file should keep
// the process alive. A CI run on PostgreSQL once hung for good after every test of a world-based file
// had passed (one timer left, no socket or child). Should that happen again, the file still ends 60 s
// after its close began, keeping its exit code, and says what was left.

/** A workflow row owned by the world's user, in `status`, and a git worktree for it. */
export async function newWorkflow(
  world: RunnerWorld,
  status = 'developing',
): Promise<{ workflowId: string; worktree: string }> {
  const workflowId = `wf-${randomUUID()}`;
  const worktree = mkdtempSync(path.join(os.tmpdir(), 'svc-worktree-'));
  execFileSync('git', ['init', '-q', worktree]);
  writeFileSync(path.join(worktree, 'README.md'), '# project\n');
  const { db, t } = world.app.database;
  await db.insert(t.autonomousWorkflows).values({
    workflowId,
    tenantId: world.tenantId,
    userId: world.userId,
    status,
    currentPhase: 'development',
    projectPath: worktree,
    definitionSnapshot: JSON.stringify({ requirement: 'test', cli_tool: 'cli_beta' }),
  });
  return { workflowId, worktree };
}

export async function setStatus(world: RunnerWorld, workflowId: string, status: string) {
  const { db, t } = world.app.database;
  await db
    .update(t.autonomousWorkflows)
    .set({ status })
    .where(eq(t.autonomousWorkflows.workflowId, workflowId));
}

export function writeScript(worktree: string, script: Record<string, unknown>) {
  mkdirSync(path.join(worktree, '.svc-fake'), { recursive: true });
  writeFileSync(path.join(worktree, '.svc-fake', 'script.json'), JSON.stringify(script));
}

export async function waitForFile(file: string, timeoutMs = 15_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(file) || readFileSync(file, 'utf8') === '') {
    if (Date.now() > deadline) throw new Error(`${file} did not appear in ${timeoutMs} ms`);
    await sleep(25);
  }
  return readFileSync(file, 'utf8');
}

/** The process state letter from /proc/<pid>/stat (R, S, T, Z...), or null when it is gone. */
export function processState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return null;
  }
}

/** True once the process is gone (or a zombie waiting for its reaper: it runs nothing). */
export async function waitGone(pid: number, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const s = processState(pid);
    if (s === null || s === 'Z') return true;
    await sleep(25);
  }
  return false;
}

/** Model calls the mock provider answered (Anthropic messages). */
export const modelCalls = (mock: MockProvider) =>
  mock.requests.filter((r) => r.path.startsWith('/v1/messages')).length;

/** The host pid of a sandboxed process from the pid it wrote to `file` (test/support/sandbox-pids.ts). */
export async function sandboxPid(file: string, cwd: string, timeoutMs = 15_000): Promise<number> {
  return hostPidOf(Number(await waitForFile(file, timeoutMs)), cwd, undefined, timeoutMs);
}
