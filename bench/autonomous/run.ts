// Autonomous workflows benchmark (issue 13, "Measure"): N workflows (default 50) of a fast scripted
// fake CLI (one model call per step through our proxy to the mock provider, no sleeps) through the
// whole pipeline on the embedded stack (Temporal dev server, API + worker in this process, SQLite or
// PostgreSQL, the local forge, real git), all created at once over HTTP (POST /api/autonomous/workflows,
// which starts their Temporal runs), so they queue behind agent_max_concurrent_workflows (default 10).
//
// Figures (bench/autonomous/README.md explains each): total wall time; per workflow the queue wait
// and the running wall time (slot claim -> run completed), CLI time, CI time, the orchestration overhead
// per phase transition ((running - CLI - CI) / 7) p50/p99, Temporal history events, and where the
// non-CLI time goes; then the baseline (baseline.ts): the same seven CLI steps run back to back by the
// runner service alone. Exits non-zero when any workflow did not complete.
//
//   npm run bench -- autonomous [--workflows 50] [--max-concurrent 10] [--users 5] [--baseline 10]
//   DATABASE_URL=postgres://postgres:postgres@127.0.0.1:5432/postgres npm run bench -- autonomous
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { eq, inArray } from 'drizzle-orm';
import { milestonesRepository } from '../../db/repositories/autonomous/milestones.ts';
import { autonomousLimits } from '../../domain/autonomous/limits.ts';
import { TERMINAL_STATUSES } from '../../domain/autonomous/states.ts';
import { activityBusFor } from '../../services/autonomous/activity-bus.ts';
import { usingPostgres } from '../../test/support/database.ts';
import { api } from '../../test/support/session.ts';
import { temporalWorkflowId } from '../../workflows/autonomous/contract.ts';
import { machine, percentile } from '../support/stats.ts';
import { HAPPY_CLI_STEPS, runBaseline } from './baseline.ts';
import {
  figuresOf,
  maxOverlap,
  overheadSplit,
  ProcessClock,
  timelineOf,
  type WorkflowFigures,
} from './history.ts';
import { type BenchWorld, startBenchWorld } from './world.ts';

const argv = process.argv.slice(2);
const flag = (name: string, env: string, dflt: number | undefined): number | undefined => {
  const i = argv.indexOf(`--${name}`);
  const raw = i === -1 ? process.env[env] : argv[i + 1];
  if (raw === undefined) return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`--${name} (${env}) must be a positive integer, not ${raw}`);
  return n;
};
const WORKFLOWS = flag('workflows', 'BENCH_AUTONOMOUS_WORKFLOWS', 50)!;
const MAX_CONCURRENT = flag('max-concurrent', 'BENCH_AUTONOMOUS_MAX_CONCURRENT', undefined);
/** Owners, round robin: 5 users x the default max_sessions_per_user 5 leaves the global limit binding. */
const USERS = flag('users', 'BENCH_AUTONOMOUS_USERS', 5)!;
const BASELINE = flag('baseline', 'BENCH_AUTONOMOUS_BASELINE', 10)!;
const TIMEOUT_S = flag('timeout', 'BENCH_AUTONOMOUS_TIMEOUT', 1200)!;
/** Phase transitions of a happy workflow: preparation -> planning -> development -> pr_review -> report
 * -> merge -> acceptance_verification -> completed. */
const TRANSITIONS = 7;
const HAPPY_MILESTONES = [
  'plan',
  'plan_review',
  'implementation',
  'test',
  'pr_review',
  'report',
  'merge',
  'acceptance_verification',
];
const REQUIREMENT = 'Make app.txt say fixed';

const log = (l: string) => process.stderr.write(`${l}\n`);
const wallNow = () => performance.timeOrigin + performance.now();

interface Outcome {
  workflowId: string;
  status: string;
  error: string | null;
  happy: boolean;
  figures?: WorkflowFigures;
  /** CLI process lifetimes (activity bus started -> exited) in this workflow. */
  processMs: number;
  processRuns: number;
  /** completed_at - started_at of the row (whole seconds on SQLite). */
  rowWallMs: number | null;
  /** Certainly while the workflow held its slot (history.ts slotInner). */
  window?: { from: number; to: number };
  completedAt?: number;
}

async function createAll(world: BenchWorld, names: string[], clock: ProcessClock): Promise<string[]> {
  return Promise.all(
    names.map(async (name, i) => {
      const r = await api(world.url, 'POST', '/api/autonomous/workflows', {
        auth: world.users[i % world.users.length]!,
        body: { requirement: REQUIREMENT, project_path: world.project(name), cli_tool: 'cli_beta' },
      });
      if (r.status !== 201) throw new Error(`create ${name}: ${r.status} ${JSON.stringify(r.body)}`);
      const id: string = r.body.id;
      // The first CLI step follows the workspace preparation (git), long after this subscription.
      activityBusFor(world.database).subscribe(id, clock.on);
      return id;
    }),
  );
}

async function waitAll(
  world: BenchWorld,
  ids: string[],
): Promise<Map<string, { status: string; error: string | null }>> {
  const { db, t } = world.database;
  const w = t.autonomousWorkflows;
  const ends = new Set<string>([...TERMINAL_STATUSES, 'failed', 'paused', 'planning_timeout']);
  const deadline = Date.now() + TIMEOUT_S * 1000;
  let lastReport = 0;
  for (;;) {
    const rows = await db
      .select({ id: w.workflowId, status: w.status, error: w.error })
      .from(w)
      .where(inArray(w.workflowId, ids));
    const done = rows.filter((r) => ends.has(r.status));
    if (done.length === ids.length || Date.now() > deadline)
      return new Map(rows.map((r) => [r.id, { status: r.status, error: r.error }]));
    if (Date.now() - lastReport > 10_000) {
      lastReport = Date.now();
      const by: Record<string, number> = {};
      for (const r of rows) by[r.status] = (by[r.status] ?? 0) + 1;
      log(`  ${done.length}/${ids.length} ended  ${JSON.stringify(by)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function measure(world: BenchWorld, ids: string[], clock: ProcessClock): Promise<Outcome[]> {
  const ended = await waitAll(world, ids);
  const client = await world.deps.temporal.client();
  const milestones = milestonesRepository(world.database);
  const { db, t } = world.database;
  const out: Outcome[] = [];
  for (const id of ids) {
    const row = ended.get(id) ?? { status: 'missing', error: null };
    const kinds = (await milestones.list(id)).map((m) => m.kind);
    const o: Outcome = {
      workflowId: id,
      status: row.status,
      error: row.error,
      happy: row.status === 'completed' && JSON.stringify(kinds) === JSON.stringify(HAPPY_MILESTONES),
      processMs: clock.total(id).ms,
      processRuns: clock.total(id).runs,
      rowWallMs: null,
    };
    const [r] = await db
      .select({ startedAt: t.autonomousWorkflows.startedAt, completedAt: t.autonomousWorkflows.completedAt })
      .from(t.autonomousWorkflows)
      .where(eq(t.autonomousWorkflows.workflowId, id));
    if (r?.startedAt && r.completedAt) o.rowWallMs = r.completedAt.getTime() - r.startedAt.getTime();
    if (row.status === 'completed') {
      const handle = client.workflow.getHandle(temporalWorkflowId(id));
      await handle.result();
      const tl = timelineOf((await handle.fetchHistory()).events ?? []);
      o.figures = figuresOf(tl, TRANSITIONS);
      o.completedAt = tl.completedMs!;
      o.window = o.figures.slotInner;
    }
    out.push(o);
  }
  return out;
}

const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-').padStart(9);
const row = (label: string, xs: number[], scale = 1) =>
  `${label.padEnd(62)}${f1(percentile(xs, 0.5) / scale)}${f1(percentile(xs, 0.99) / scale)}${f1(Math.max(...xs) / scale)}`;

async function main() {
  const db = usingPostgres() ? 'PostgreSQL' : 'SQLite';
  const world = await startBenchWorld({ maxConcurrent: MAX_CONCURRENT, users: USERS, log });
  let failed = false;
  try {
    const limit = autonomousLimits(world.settings).maxConcurrentWorkflows;
    log(
      `autonomous bench: ${WORKFLOWS} workflows, agent_max_concurrent_workflows=${limit}, ${USERS} users, ${db}`,
    );
    const clock = new ProcessClock();

    // Warm-up: one workflow end to end (the worker's first tasks, the bundle, git and the fake CLI's
    // first start), not counted.
    log('  warm-up workflow...');
    const warm = await createAll(world, ['warmup'], clock);
    const warmOut = await measure(world, warm, clock);
    if (warmOut[0]?.status !== 'completed')
      throw new Error(`the warm-up workflow ended ${warmOut[0]?.status}: ${warmOut[0]?.error}`);

    const names = Array.from({ length: WORKFLOWS }, (_, i) => `wf-${i}`);
    // The API, the proxy, the worker and its activities share this process's event loop.
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const t0 = wallNow();
    const ids = await createAll(world, names, clock);
    const createdMs = wallNow() - t0;
    log(`  ${ids.length} workflows created and started in ${(createdMs / 1000).toFixed(1)} s; waiting...`);
    const outcomes = await measure(world, ids, clock);
    loop.disable();
    const completed = outcomes.filter((o) => o.figures);
    const wallMs = Math.max(...completed.map((o) => o.completedAt!)) - t0;
    const notDone = outcomes.filter((o) => o.status !== 'completed');
    const unhappy = outcomes.filter((o) => o.status === 'completed' && !o.happy);

    log(`  baseline: ${BASELINE} sequences of the ${HAPPY_CLI_STEPS.length} CLI steps, one at a time...`);
    const base1 = await runBaseline(world, { sequences: BASELINE, concurrency: 1, requirement: REQUIREMENT });
    let baseN: Awaited<ReturnType<typeof runBaseline>> | null = null;
    if (limit > 1) {
      log(`  baseline: ${BASELINE * 2} sequences, ${limit} at a time...`);
      baseN = await runBaseline(world, {
        sequences: BASELINE * 2,
        concurrency: limit,
        requirement: REQUIREMENT,
      });
    }

    const F = completed.map((o) => o.figures!);
    const pick = (fn: (f: WorkflowFigures) => number) => F.map(fn);
    const procOver = completed.map(
      (o) => (o.figures!.runningMs - o.processMs - o.figures!.ciMs) / TRANSITIONS,
    );
    const aroundCli = completed.map((o) => (o.figures!.cliMs - o.processMs) / o.figures!.cliRuns);
    const types = [...new Set(F.flatMap((f) => Object.keys(f.breakdown.activityExecMs)))].sort();

    console.log(
      `\nAutonomous workflows: ${WORKFLOWS} started together, agent_max_concurrent_workflows=${limit}, ${db}, ${machine()}`,
    );
    console.log(
      `completed ${completed.length}/${WORKFLOWS} (happy path ${completed.length - unhappy.length}); total wall time ${(wallMs / 1000).toFixed(1)} s ` +
        `(first POST -> last completion; creating and starting all took ${(createdMs / 1000).toFixed(1)} s); ` +
        `most holding a slot at once ${maxOverlap(completed.map((o) => o.window!))}`,
    );
    console.log(`${''.padEnd(62)}${'p50'.padStart(9)}${'p99'.padStart(9)}${'max'.padStart(9)}`);
    console.log(
      row(
        'queue wait, run start -> slot claim (s)',
        pick((f) => f.queueMs),
        1000,
      ),
    );
    console.log(
      row(
        'running wall, slot claim -> run completed (s)',
        pick((f) => f.runningMs),
        1000,
      ),
    );
    console.log(
      row(
        'slot held, slot claim -> completed written (s)',
        pick((f) => f.slot.to - f.slot.from),
        1000,
      ),
    );
    console.log(
      row(
        'running wall from the row, started_at -> completed_at (s)',
        completed.map((o) => o.rowWallMs ?? Number.NaN),
        1000,
      ),
    );
    console.log(
      row(
        'CLI activity time per workflow, 7 runAutonomousCli (s)',
        pick((f) => f.cliMs),
        1000,
      ),
    );
    console.log(
      row(
        'CLI process time per workflow, started -> exited (s)',
        completed.map((o) => o.processMs),
        1000,
      ),
    );
    console.log(
      row(
        'CI activity time per workflow, runAutonomousCi (s)',
        pick((f) => f.ciMs),
        1000,
      ),
    );
    console.log(
      row(
        'ORCHESTRATION OVERHEAD per transition, excl. CLI+CI activities (ms)',
        pick((f) => f.overheadPerTransitionMs),
      ),
    );
    const split = F.map((f) => overheadSplit(f, TRANSITIONS));
    console.log(
      row(
        '  of which Temporal round trips (dispatch + workflow tasks) (ms)',
        split.map((x) => x.temporal),
      ),
    );
    console.log(
      row(
        '  of which forge git activities (ms)',
        split.map((x) => x.forge),
      ),
    );
    console.log(
      row(
        '  of which database bookkeeping activities (ms)',
        split.map((x) => x.database),
      ),
    );
    console.log(
      row(
        '  of which between events (ms)',
        split.map((x) => x.rest),
      ),
    );
    console.log(row('overhead per transition, excl. only CLI process + CI (ms)', procOver));
    console.log(
      row(
        'Temporal history events per workflow',
        pick((f) => f.events),
      ),
    );
    console.log(
      '\nwhere the running time outside the CLI and CI goes, per workflow (ms; count per workflow):',
    );
    console.log(row('  runner work around each CLI process (activity - process)', aroundCli));
    for (const name of types)
      console.log(
        row(
          `  ${name} (x${percentile(
            pick((f) => f.breakdown.activityCount[name] ?? 0),
            0.5,
          )})`,
          pick((f) => f.breakdown.activityExecMs[name] ?? 0),
        ),
      );
    console.log(
      row(
        `  activity dispatch, scheduled -> started (x${percentile(
          pick((f) => Object.values(f.breakdown.activityCount).reduce((a, b) => a + b, 0)),
          0.5,
        )})`,
        pick((f) => f.breakdown.activityQueueMs),
      ),
    );
    const wfts = percentile(
      pick((f) => f.breakdown.workflowTasks),
      0.5,
    );
    console.log(
      row(
        `  workflow task dispatch, scheduled -> started (x${wfts})`,
        pick((f) => f.breakdown.workflowTaskQueueMs),
      ),
    );
    console.log(
      row(
        `  workflow task execution, started -> completed (x${wfts})`,
        pick((f) => f.breakdown.workflowTaskExecMs),
      ),
    );
    console.log(
      `  (event loop delay of the API + worker process during the run: p50 ${(loop.percentile(50) / 1e6).toFixed(1)} ms, ` +
        `p99 ${(loop.percentile(99) / 1e6).toFixed(1)} ms, max ${(loop.max / 1e6).toFixed(1)} ms)`,
    );
    console.log('\nbaseline: the same 7 CLI steps back to back, runner service alone, no Temporal (ms)');
    console.log(row(`  one step, cliRunner.run(), 1 at a time (${base1.stepMs.length} steps)`, base1.stepMs));
    console.log(row('  one CLI process, started -> exited, 1 at a time', base1.processMs));
    console.log(row('  7 steps back to back, 1 at a time (s)', base1.sequenceMs, 1000));
    if (baseN) {
      console.log(
        row(`  one step, ${limit} sequences at a time (${baseN.stepMs.length} steps)`, baseN.stepMs),
      );
      console.log(row(`  one CLI process, ${limit} at a time`, baseN.processMs));
      console.log(row(`  7 steps back to back, ${limit} at a time (s)`, baseN.sequenceMs, 1000));
    }

    if (notDone.length || unhappy.length) {
      failed = true;
      for (const o of [...notDone, ...unhappy])
        console.error(`NOT COMPLETED ON THE HAPPY PATH: ${o.workflowId} ${o.status} ${o.error ?? ''}`);
    }
  } finally {
    await world.close();
  }
  process.exit(failed ? 1 : 0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
