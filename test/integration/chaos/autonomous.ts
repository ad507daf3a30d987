// The autonomous part of the chaos workload: two workflows created over HTTP on the cluster's separate
// API and worker, one in development (its implementation agent mid-step) and one in merge (its CI
// mid-run) when the kill comes. After the restart both must complete, resuming at their persisted
// phase, with exactly the happy path's milestones, each once and on its first attempt.
//   mode 'worker' (scenario b): the agent sleeps until its activity is run again by the next worker, like
//     autonomous/workflow-crash.test.ts; the implementation resumes the plan's conversation, so the fake
//     CLI's `whenResumed` cannot tell the held run from its retry: release() rewrites the script in the
//     held agent's worktree instead. The first CI run sleeps; the retried one finds its pid file.
//   mode 'temporal' (scenario c): activities are not run again (the worker lives), so the merge's CI waits
//     for release() and the development workflow is started once the other is held, its agent mid-step
//     for 3 s (its activity ends while the server is down).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { milestonesRepository } from '../../../db/repositories/autonomous/milestones.ts';
import { workflowsRepository } from '../../../db/repositories/autonomous/workflows.ts';
import { tenantProjectRoot } from '../../../services/autonomous/projects.ts';
import { MOCK_EXPECTED_USAGE, type MockProvider, startMockProvider } from '../../fixtures/mock-provider.ts';
import { createUser, PASSWORD, uniqueName } from '../../support/actors.ts';
import { ADMIN, type TestApp } from '../../support/harness.ts';
import { REPO, waitUntil } from '../../support/remote.ts';
import { api, login, type Session } from '../../support/session.ts';
import { FAST_RUNNER, HAPPY_KINDS, stepScript } from '../autonomous/workflow-support.ts';
import type { Cluster } from './support.ts';

export const AUTONOMOUS_CLI = path.join(REPO, 'test/fixtures/fake-autonomous-cli.mjs');

/** The cluster env the autonomous runner needs (the scripted CLI as cli_beta, the proxy at the API). */
export const autonomousEnv = (apiUrl: string) => ({
  SVC_AUTONOMOUS__CLI_PATHS: JSON.stringify({ cli_beta: AUTONOMOUS_CLI }),
  SVC_AUTONOMOUS__PROXY_BASE_URL: apiUrl,
  // The chaos checks watch the CLI from outside (a pid file in their own dir, /proc/<pid>/cwd): run
  // it unconfined; the sandbox's own behaviour is tested in test/integration/autonomous/sandbox.test.ts.
  SVC_SANDBOX: 'off',
  // Shorter runner waits (the same reads and heartbeats, sooner).
  ...FAST_RUNNER,
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, {
    cwd,
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@x',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@x',
    },
  }).toString();

export interface AutonomousLoad {
  mock: MockProvider;
  owner: Session;
  developing: string;
  merging: string;
  /** Pids of the held implementation agent and of the held CI run (to clean up orphans). */
  pids(): number[];
  /** Both workflows are held where the kill must hit them. */
  held(): Promise<void>;
  /** After the kill: the implementation's next run (in the held agent's worktree) is a quick one. */
  release(): void;
  /** Both completed with the happy path's milestones once each; returns violations. */
  finished(timeoutMs: number): Promise<string[]>;
  close(): Promise<void>;
}

export async function startAutonomousLoad(
  cluster: Cluster,
  tenantId: number,
  dataDir: string,
  mode: 'worker' | 'temporal' = 'worker',
) {
  const mock = await startMockProvider();
  const app = { url: cluster.url } as TestApp;
  const admin = await login(cluster.url, ADMIN.username, ADMIN.password);
  const key = await api(cluster.url, 'POST', '/api/remote/api-keys', {
    auth: admin,
    body: {
      provider: 'anthropic',
      key_name: 'chaos key',
      api_key: 'real-anthropic-key-0123456789',
      base_url: mock.url,
      tenant_id: tenantId,
    },
  });
  assert.equal(key.status, 201, JSON.stringify(key.body));
  const u = await createUser(app, admin, { role: 'user', tenant_id: tenantId });
  const owner = await login(cluster.url, u.username, PASSWORD);
  const ownerId = u.id;
  const root = tenantProjectRoot(path.join(dataDir, 'projects'), tenantId);
  const marks = path.join(dataDir, 'chaos-marks');
  mkdirSync(marks, { recursive: true });
  const implPid = path.join(marks, 'impl.pid');
  const ciPid = path.join(marks, 'ci.pid');

  const project = (script: unknown, ci: string) => {
    const dir = path.join(root, uniqueName('project'));
    mkdirSync(path.join(dir, '.svc-fake'), { recursive: true });
    mkdirSync(path.join(dir, '.svc'), { recursive: true });
    git(dir, 'init', '-q', '-b', 'main');
    writeFileSync(path.join(dir, 'app.txt'), 'broken\n');
    writeFileSync(path.join(dir, 'ci.sh'), ci);
    writeFileSync(path.join(dir, '.svc', 'ci'), 'sh ci.sh\n');
    writeFileSync(path.join(dir, '.svc-fake', 'script.json'), JSON.stringify({ byStep: script }));
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'initial');
    return dir;
  };
  const check = 'grep -q fixed app.txt || { echo "app.txt is not fixed"; exit 1; }\n';
  const releaseFile = path.join(marks, 'release');
  const quickImplementation = {
    steps: [
      { call: 1 },
      { write: { path: 'app.txt', content: 'fixed\n' } },
      { text: 'implemented after the crash' },
    ],
  };
  // mode 'worker': the implementation agent (it resumes the plan's conversation) sleeps; release()
  // rewrites the worktree's script so the run the next worker starts is quick. mode 'temporal': the
  // agent is mid-step for a few seconds only (its activity ends while the server is down).
  const developingProject = project(
    stepScript({
      implementation:
        mode === 'worker'
          ? { pidFile: implPid, steps: [{ call: 1 }, { sleep: 120_000 }] }
          : { pidFile: implPid, steps: [{ call: 1 }, { sleep: 3000 }, ...quickImplementation.steps] },
    }),
    check,
  );
  // mode 'worker': the first CI run writes its pid and sleeps (held in merge); a run after it finds the
  // pid file. mode 'temporal': every CI run waits for the release file.
  const mergingProject = project(
    stepScript(),
    mode === 'worker'
      ? `if [ ! -s ${ciPid} ]; then echo $$ > ${ciPid}; sleep 120; fi\n${check}`
      : `[ -s ${ciPid} ] || echo $$ > ${ciPid}\nwhile [ ! -f ${releaseFile} ]; do sleep 0.2; done\n${check}`,
  );
  const create = async (projectPath: string) => {
    const r = await api(cluster.url, 'POST', '/api/autonomous/workflows', {
      auth: owner,
      body: { requirement: 'Make app.txt say fixed', project_path: projectPath, cli_tool: 'cli_beta' },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return (r.body.id ?? r.body.workflow?.id) as string;
  };
  const readPid = (f: string) => (existsSync(f) ? Number(readFileSync(f, 'utf8').trim()) || 0 : 0);
  // mode 'temporal': the merging one is held first, then the other one is started into development.
  const merging = await create(mergingProject);
  if (mode === 'temporal')
    await waitUntil('the first CI run held', async () => readPid(ciPid) > 0, 120_000, 100);
  const developing = await create(developingProject);
  const workflows = workflowsRepository(cluster.database);
  const milestones = milestonesRepository(cluster.database);

  const load: AutonomousLoad = {
    mock,
    owner,
    developing,
    merging,
    pids: () => [readPid(implPid), readPid(ciPid)].filter(Boolean),
    async held() {
      await waitUntil(
        'the implementation agent and the first CI run held',
        async () => readPid(implPid) > 0 && readPid(ciPid) > 0,
        120_000,
        100,
      );
      for (const [id, status] of [
        [developing, 'developing'],
        [merging, 'merging'],
      ] as const) {
        const row = await workflows.find(id);
        const ms = (await milestones.list(id)).map((m) => `${m.kind}:${m.status}:${m.attempt}:${m.content}`);
        assert.equal(
          row?.status,
          status,
          `${id}: ${row?.error}\n${ms.join('\n')}\n${cluster.procs.worker?.output().slice(-4000)}`,
        );
      }
    },
    release() {
      if (mode === 'temporal') {
        writeFileSync(releaseFile, 'go');
        return;
      }
      const worktree = readlinkSync(`/proc/${readPid(implPid)}/cwd`);
      const file = path.join(worktree, '.svc-fake', 'script.json');
      const script = JSON.parse(readFileSync(file, 'utf8'));
      script.byStep.implementation = quickImplementation;
      writeFileSync(file, JSON.stringify(script));
    },
    async finished(timeoutMs) {
      const out: string[] = [];
      for (const id of [developing, merging]) {
        let row = await workflows.find(id);
        try {
          row = await waitUntil(
            `${id} to end`,
            async () => {
              const r = await workflows.find(id);
              return r && ['completed', 'failed', 'cancelled'].includes(r.status) ? r : undefined;
            },
            timeoutMs,
            200,
          );
        } catch {}
        if (row?.status !== 'completed')
          out.push(`workflow ${id} is ${row?.status} in ${row?.currentPhase}: ${row?.error ?? ''}`);
        const ms = await milestones.list(id);
        const kinds = ms.map((m) => m.kind);
        if (JSON.stringify(kinds) !== JSON.stringify(HAPPY_KINDS))
          out.push(`workflow ${id} milestones ${kinds.join(',')} are not ${HAPPY_KINDS.join(',')}`);
        const impl = ms.find((m) => m.kind === 'implementation');
        if (mode === 'worker' && id === developing && impl?.content !== 'implemented after the crash')
          out.push(`workflow ${id}: the implementation was not run again after the kill (${impl?.content})`);
        for (const m of ms)
          if (m.attempt !== 1 || m.status !== 'completed')
            out.push(`workflow ${id} milestone ${m.kind} is ${m.status} on attempt ${m.attempt}`);
      }
      // Model calls through the proxy charge the owner's quota once each, crash or not.
      const calls = load.mock.requests.filter((r) => r.path.startsWith('/v1/messages')).length;
      const [q] = await cluster.database.sql.query<{ tokens: number; requests: number }>(
        `SELECT COALESCE(SUM(tokens_used), 0) AS tokens, COALESCE(SUM(requests_used), 0) AS requests
         FROM quota_usage WHERE user_id = ? AND period = 'daily'`,
        [ownerId],
      );
      const perCall = MOCK_EXPECTED_USAGE['anthropic-messages'].totalTokens;
      if (calls === 0) out.push('no model call reached the provider');
      if (Number(q?.requests) !== calls || Number(q?.tokens) !== calls * perCall)
        out.push(
          `the owner's quota counts ${q?.requests} requests and ${q?.tokens} tokens for ${calls} model calls of ${perCall} tokens`,
        );
      return out;
    },
    async close() {
      for (const pid of load.pids())
        for (const target of [-pid, pid])
          try {
            process.kill(target, 'SIGKILL');
          } catch {}
      await mock.close();
    },
  };
  return load;
}
