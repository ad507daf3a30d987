// `npm run fuzz`: schemathesis over every operation of /api/openapi.json, once per caller role.
//
// Starts the real app (SQLite, or its own PostgreSQL database when DATABASE_URL is set; a real
// Temporal dev server on free ports; a local mock model provider behind the proxy), and for each role
// seeds a fresh world (world.ts: so that what one role breaks, a user deactivated or a tenant
// suspended, cannot hide defects from the next) and runs schemathesis with that role's credential
// against the operations of its credential scheme (operations.ts), path parameters drawn half of the
// time from the world's real ids of both tenants (so cross-tenant attempts use real ids). Checks:
// not_a_server_error, response_schema_conformance, content_type_conformance and hooks.py's
// no_secret_in_body (seeded secrets, password hashes, other tenants' data).
//
// Budget: deep roles (platform admin, tenant admin, user: the widest and the tenant-scoped paths) run
// the deterministic coverage phase (boundaries, wrong types, missing fields) and then fuzzing, for a
// fixed wall time (schemathesis --max-time: fuzzing repeats until it is spent), each alone. The
// others sweep every operation with the coverage phase's valid inputs (what an authorised-looking
// request can reach: refusals, scoping, leaks), FUZZ_PARALLEL (2) at a time, capped in time. Each
// schemathesis runs FUZZ_WORKERS threads. Environment: FUZZ_DEEP_SECONDS (default 35),
// FUZZ_LIGHT_SECONDS (cap, 15), FUZZ_PARALLEL (2), FUZZ_WORKERS (4), FUZZ_MAX_EXAMPLES per operation
// per fuzzing round (5), FUZZ_SEED (fixed by default: CI is reproducible), FUZZ_ROLES (comma list).
// An operation a role did not reach within its time is reported as not reached (not a failure).
// At the end the application's own log lines are searched for the secrets too (`logs`).
//
// Reports under test-artifacts/fuzz/: <role>.junit.xml, <role>.log, app.log, report.txt. The last
// line printed is `fuzz: N passed, N failed` (operations x roles); exits non-zero on any failure.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startMockProvider } from '../fixtures/mock-provider.ts';
import { startFuzzTarget } from './app.ts';
import { fuzzerCrash, type OperationOutcome, parseJunit } from './junit.ts';
import { leakInLogs } from './log-scan.ts';
import { type OpenApiDoc, operationsFor, schemathesisConfig } from './operations.ts';
import { ensureSchemathesis, runSchemathesis } from './schemathesis.ts';
import { seedWorld, type World } from './world.ts';

const OUT = path.resolve('test-artifacts/fuzz');
const HOOKS = path.resolve('test/fuzz/hooks.py');
const CHECKS = [
  'not_a_server_error',
  'response_schema_conformance',
  'content_type_conformance',
  'no_secret_in_body',
];
/** Run order: tenant roles first, the system-wide (most destructive) last. */
const ROLES = [
  'user',
  'tenant_admin',
  'readonly',
  'manager',
  'other_tenant_admin',
  'agent',
  'proxy_token',
  'upload_key',
  'anonymous',
  'legacy_admin',
  'platform_admin',
];
const DEEP = new Set(['platform_admin', 'tenant_admin', 'user']);

const num = (name: string, dflt: number) => {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : dflt;
};

interface RoleResult {
  role: string;
  outcomes: OperationOutcome[];
  problem?: string;
}

async function main(): Promise<number> {
  const started = Date.now();
  const log = (l: string) => console.log(`[fuzz ${((Date.now() - started) / 1000).toFixed(1)}s] ${l}`);
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  const st = await ensureSchemathesis(log);
  const mock = await startMockProvider();
  const target = await startFuzzTarget(log).catch(async (e) => {
    await mock.close();
    throw e;
  });
  const { app } = target;
  log(`app at ${app.url} on ${app.testDb.dialect}`);
  const results: RoleResult[] = [];
  const worlds: World[] = [];
  try {
    const doc = (await (await fetch(`${app.url}/api/openapi.json`)).json()) as OpenApiDoc;
    writeFileSync(path.join(OUT, 'openapi.json'), JSON.stringify(doc, null, 1));
    const only = process.env.FUZZ_ROLES?.split(',').filter(Boolean);
    const queue = ROLES.filter((n) => !only || only.includes(n));
    if (only)
      for (const n of only) if (!ROLES.includes(n)) throw new Error(`unknown role ${n}: ${ROLES.join(', ')}`);

    const runRole = async (name: string, world: World): Promise<RoleResult> => {
      worlds.push(world);
      const role = world.roles.find((r) => r.name === name)!;
      const ops = operationsFor(doc, role.schemes, Object.keys(role.headers).length > 0);
      // Every world seeded so far: its other tenants' markers are forbidden to this role too.
      const markers: Record<string, string[]> = {};
      for (const w of worlds) Object.assign(markers, w.tenantMarkers);
      const secrets = [...new Set(worlds.flatMap((w) => w.secrets))];
      const worldFile = path.join(OUT, `${name}.world.json`);
      writeFileSync(
        worldFile,
        JSON.stringify({ secrets, own: role.ownToken ?? '', tenant: role.tenantId, markers }),
        { mode: 0o600 },
      );
      const ids: Record<string, (string | number)[]> = {};
      for (const perTenant of Object.values(world.ids))
        for (const [param, values] of Object.entries(perTenant))
          ids[param] = [...(ids[param] ?? []), ...values];
      const configFile = path.join(OUT, `${name}.schemathesis.toml`);
      writeFileSync(configFile, schemathesisConfig(ops.included, ids));
      const junitPath = path.join(OUT, `${name}.junit.xml`);
      const deep = DEEP.has(name);
      const seconds = deep ? num('FUZZ_DEEP_SECONDS', 35) : num('FUZZ_LIGHT_SECONDS', 15);
      log(
        `${name}: ${ops.included.length} operations, ${deep ? 'coverage + fuzzing' : 'coverage of valid inputs'}, at most ${seconds}s`,
      );
      const t0 = Date.now();
      const schemathesis = (operationIds: string[], junit: string) =>
        runSchemathesis({
          st,
          schemaUrl: `${app.url}/api/openapi.json`,
          baseUrl: app.url,
          headers: role.headers,
          operationIds,
          checks: CHECKS,
          phases: deep ? ['coverage', 'fuzzing'] : ['coverage'],
          mode: deep ? 'all' : 'positive',
          maxExamples: num('FUZZ_MAX_EXAMPLES', 5),
          maxTimeSeconds: seconds,
          workers: num('FUZZ_WORKERS', 4),
          seed: num('FUZZ_SEED', 16),
          junitPath: junit,
          configFile,
          hooksFile: HOOKS,
          env: { FUZZ_WORLD_FILE: worldFile },
        });
      let res = await schemathesis(
        ops.included.map((o) => o.operationId),
        junitPath,
      );
      writeFileSync(path.join(OUT, `${name}.log`), res.out);
      let outcomes: OperationOutcome[] = [];
      try {
        outcomes = parseJunit(readFileSync(junitPath, 'utf8'));
      } catch (error) {
        return {
          role: name,
          outcomes,
          problem: `no JUnit report (${(error as Error).message}); exit ${res.code}`,
        };
      }
      // Schemathesis itself can crash while generating inputs (a Python error inside its generator,
      // before any request: seen once as CPython's "AST constructor recursion depth mismatch" and a
      // Hypothesis "Inconsistent results" on the OTLP and upload bodies). Such an operation is run
      // once more on its own; a second crash, or any failure of our API, stays a failure.
      const crashed = outcomes.filter((o) => o.status === 'failed' && fuzzerCrash(o.message));
      if (crashed.length) {
        const retryIds = ops.included
          .filter((o) => crashed.some((c) => c.operation === `${o.method} ${o.path}`))
          .map((o) => o.operationId);
        log(
          `${name}: ${crashed.length} operation(s) hit a crash inside schemathesis; running them once more`,
        );
        const retryJunit = path.join(OUT, `${name}.retry.junit.xml`);
        res = await schemathesis(retryIds, retryJunit);
        writeFileSync(path.join(OUT, `${name}.retry.log`), res.out);
        const again = new Map(parseJunit(readFileSync(retryJunit, 'utf8')).map((o) => [o.operation, o]));
        outcomes = outcomes.map((o) => (crashed.includes(o) ? (again.get(o.operation) ?? o) : o));
        if (!outcomes.some((o) => o.status === 'failed')) res = { ...res, code: 0 };
      }
      // Operations the time ran out before: absent from the report.
      const reported = new Set(outcomes.map((o) => o.operation));
      for (const op of ops.included)
        if (!reported.has(`${op.method} ${op.path}`))
          outcomes.push({ operation: `${op.method} ${op.path}`, status: 'skipped', message: 'not reached' });
      const failed = outcomes.filter((p) => p.status === 'failed');
      const skipped = outcomes.filter((p) => p.status === 'skipped');
      const cases = /(\d+) generated/.exec(res.out)?.[1] ?? '?';
      log(
        `${name}: ${outcomes.length - failed.length - skipped.length} passed, ${failed.length} failed, ${skipped.length} not reached, ${cases} cases, ${((Date.now() - t0) / 1000).toFixed(1)}s`,
      );
      for (const f of failed) log(`  FAIL ${name} ${f.operation}: ${firstLine(f.message)}`);
      if (res.code !== 0 && !failed.length)
        return {
          role: name,
          outcomes,
          problem: `schemathesis exited ${res.code} with no failed operation (${name}.log)`,
        };
      return { role: name, outcomes };
    };

    const run = async (name: string) => results.push(await runRole(name, await seedWorld(app, mock.url)));
    // Deep roles alone; each run of consecutive light roles FUZZ_PARALLEL at a time.
    for (let i = 0; i < queue.length; ) {
      if (DEEP.has(queue[i]!)) {
        await run(queue[i++]!);
        continue;
      }
      const light: string[] = [];
      while (i < queue.length && !DEEP.has(queue[i]!)) light.push(queue[i++]!);
      await Promise.all(
        Array.from({ length: Math.min(num('FUZZ_PARALLEL', 2), light.length) }, async () => {
          for (let name = light.shift(); name; name = light.shift()) await run(name);
        }),
      );
    }
    // The application's log lines (pino, captured by the harness) hold none of the secrets either.
    writeFileSync(path.join(OUT, 'app.log'), app.logs.join(''));
    const leak = leakInLogs(app.logs, [...new Set(worlds.flatMap((w) => w.secrets))]);
    results.push({
      role: 'logs',
      outcomes: [
        { operation: 'application log lines', status: leak ? 'failed' : 'passed', message: leak ?? '' },
      ],
    });
  } finally {
    await target.stop();
    await mock.close();
    // The hooks' inputs hold the seeded tokens and keys: not left among the artifacts.
    for (const f of readdirSync(OUT))
      if (f.endsWith('.world.json')) rmSync(path.join(OUT, f), { force: true });
  }

  const all = results.flatMap((r) => r.outcomes.map((o) => ({ ...o, role: r.role })));
  const failed = all.filter((o) => o.status === 'failed');
  const skipped = all.filter((o) => o.status === 'skipped');
  const problems = results.filter((r) => r.problem).map((r) => `${r.role}: ${r.problem}`);
  const passed = all.length - failed.length - skipped.length;
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const summary = `fuzz: ${passed} passed, ${failed.length + problems.length} failed`;
  const lines = [
    `fuzz report (${new Date().toISOString()}, ${seconds}s, database ${app.testDb.dialect})`,
    ...failed.map((f) => `FAILED ${f.role} ${f.operation}\n${indent(f.message)}`),
    ...problems.map((p) => `PROBLEM ${p}`),
    ...skipped.map((s) => `NOT REACHED (time budget) ${s.role} ${s.operation}`),
    `${skipped.length} operation x role pairs not reached within the time budget`,
    summary,
  ];
  writeFileSync(path.join(OUT, 'report.txt'), `${lines.join('\n')}\n`);
  for (const p of problems) console.log(`PROBLEM ${p}`);
  console.log(`report: ${path.relative(process.cwd(), path.join(OUT, 'report.txt'))} (${seconds}s)`);
  if (skipped.length)
    console.log(`${skipped.length} operation x role pairs not reached within the time budget`);
  console.log(summary);
  return failed.length || problems.length || !all.length ? 1 : 0;
}

const firstLine = (s: string) =>
  s
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('1. Test Case ID'))[0] ?? s;

const indent = (s: string) =>
  s
    .split('\n')
    .slice(0, 40)
    .map((l) => `    ${l}`)
    .join('\n');

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error);
    console.log('fuzz: 0 passed, 1 failed');
    process.exit(1);
  },
);
