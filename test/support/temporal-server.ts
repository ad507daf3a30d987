// The real Temporal server (go.temporal.io/server, built by `npm run temporal:install-server`) for the
// production topology test, set up as examples/deploy/temporal documents it: two fresh PostgreSQL
// databases whose schemas setup-schema.sh creates with temporal-sql-tool, the server started from
// temporal-server.yaml with only the databases, credentials, pool sizes and ports changed, and a
// namespace created with the Temporal CLI; stop and start again on the same ports and databases. Missing binaries are an error that says how
// to build them: the test fails rather than skips.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import YAML from 'yaml';
import { findTemporalCli } from '../../bin/temporal-cli.ts';
import { freePort, waitForTemporal } from '../../bin/temporal-dev.ts';
import {
  findTemporalServer,
  postgresSchemaDirs,
  serverCacheDir,
  TEMPORAL_SERVER_VERSION,
} from '../../bin/temporal-server.ts';

const run = promisify(execFile);
const DEPLOY = path.resolve(import.meta.dirname, '../../examples/deploy/temporal');

/**
 * A free port below 32768: the server stores its membership ports in a PostgreSQL smallint
 * (cluster_membership.rpc_port), so one from the ephemeral range makes it exit at start.
 */
async function membershipPort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const srv = net.createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '0.0.0.0', () => srv.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

export interface TemporalServer {
  address: string;
  namespace: string;
  /** The server's own output (stdout and stderr), for a failure message. */
  output(): string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Stops the server and drops its databases and files. */
  destroy(): Promise<void>;
}

/**
 * A Temporal server on `adminUrl`'s PostgreSQL (the role needs CREATEDB), in two new databases,
 * started and with `namespace` registered.
 */
export async function startTemporalServer(adminUrl: string, namespace: string): Promise<TemporalServer> {
  const found = findTemporalServer();
  if (!found)
    throw new Error(
      `The Temporal server ${TEMPORAL_SERVER_VERSION} is not built (${serverCacheDir()} has no temporal-server ` +
        'and temporal-sql-tool): run `npm run temporal:install-server` first (CI does it in its "Temporal server" step).',
    );
  const bins = found;
  const db = new URL(adminUrl);
  const suffix = randomBytes(4).toString('hex');
  const names = { temporal: `temporal_t${suffix}`, visibility: `temporal_t${suffix}_visibility` };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-temporal-server-'));
  const schema = postgresSchemaDirs();
  const cli = await findTemporalCli({ explicit: process.env.TEMPORAL_CLI_PATH });
  let child: ChildProcess | undefined;
  let out = '';

  const dropDatabases = async () => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    try {
      for (const name of Object.values(names)) await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    } finally {
      await c.end();
    }
  };

  const ports = {
    frontend: await freePort(),
    frontendHttp: await freePort(),
    frontendMembership: await membershipPort(),
    history: await freePort(),
    historyMembership: await membershipPort(),
    matching: await freePort(),
    matchingMembership: await membershipPort(),
    worker: await freePort(),
    workerMembership: await membershipPort(),
    metrics: await freePort(),
  };
  const address = `127.0.0.1:${ports.frontend}`;
  const configPath = path.join(dir, 'temporal-server.yaml');

  /** examples/deploy's config with this run's databases, credentials, small pools and free ports. */
  function writeConfig() {
    const config = YAML.parse(readFileSync(path.join(DEPLOY, 'temporal-server.yaml'), 'utf8'));
    config.persistence.numHistoryShards = 4;
    for (const [store, database, maxConns] of [
      ['default', names.temporal, 8],
      ['visibility', names.visibility, 2],
    ] as const)
      Object.assign(config.persistence.datastores[store].sql, {
        databaseName: database,
        connectAddr: `${db.hostname}:${db.port || '5432'}`,
        user: decodeURIComponent(db.username),
        password: decodeURIComponent(db.password),
        // CI's PostgreSQL (max_connections 100) is shared with the suites running beside this one.
        maxConns,
        maxIdleConns: 1,
      });
    config.global.metrics.prometheus.listenAddress = `127.0.0.1:${ports.metrics}`;
    const s = config.services;
    Object.assign(s.frontend.rpc, {
      grpcPort: ports.frontend,
      httpPort: ports.frontendHttp,
      membershipPort: ports.frontendMembership,
    });
    Object.assign(s.history.rpc, { grpcPort: ports.history, membershipPort: ports.historyMembership });
    Object.assign(s.matching.rpc, { grpcPort: ports.matching, membershipPort: ports.matchingMembership });
    Object.assign(s.worker.rpc, { grpcPort: ports.worker, membershipPort: ports.workerMembership });
    config.clusterMetadata.clusterInformation.active.rpcAddress = address;
    config.dynamicConfigClient.filepath = path.join(DEPLOY, 'dynamicconfig.yaml');
    config.log.level = 'warn';
    writeFileSync(configPath, YAML.stringify(config));
  }

  async function start() {
    out = '';
    child = spawn(bins.server, ['--config-file', configPath, '--allow-no-auth', 'start'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (b) => (out += b));
    child.stderr!.on('data', (b) => (out += b));
    const exited = new Promise<never>((_, reject) =>
      child!.once('exit', (code) =>
        reject(new Error(`the Temporal server exited (${code}) while starting:\n${out.slice(-3000)}`)),
      ),
    );
    exited.catch(() => {});
    await Promise.race([waitForTemporal(address, 90_000), exited]);
  }

  async function stop() {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    const timer = setTimeout(() => c.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  }

  async function destroy() {
    await stop();
    await dropDatabases().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }

  try {
    for (const versioned of [schema.temporal, schema.visibility])
      if (!existsSync(versioned))
        throw new Error(`no schema files at ${versioned}: run \`npm run temporal:install-server\``);
    // The operator's schema steps, as examples/deploy documents them.
    await run('sh', [path.join(DEPLOY, 'setup-schema.sh')], {
      env: {
        ...process.env,
        SQL_TOOL: bins.sqlTool,
        SCHEMA: schema.root,
        DB_HOST: db.hostname,
        DB_PORT: db.port || '5432',
        DB_USER: decodeURIComponent(db.username),
        DB_PASSWORD: decodeURIComponent(db.password),
        TEMPORAL_DB: names.temporal,
        VISIBILITY_DB: names.visibility,
      },
    });
    writeConfig();
    await start();
    // Right after start the frontend may still be waiting for history and matching to join; the
    // namespace registry of every service then refreshes on its own (every 2 s): retry both steps
    // until the frontend lists workflows in the new namespace.
    const retrying = async (what: string, args: string[], done?: RegExp) => {
      const deadline = Date.now() + 60_000;
      for (;;) {
        try {
          return await run(cli, [...args, '--address', address]);
        } catch (err) {
          if (done?.test(String((err as { stderr?: string }).stderr))) return;
          if (Date.now() > deadline) throw new Error(`${what}: ${(err as Error).message}`);
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    };
    // A retried create whose first attempt went through finds the namespace there.
    await retrying(
      'namespace create',
      ['operator', 'namespace', 'create', '--namespace', namespace, '--retention', '24h'],
      /already/i,
    );
    await retrying('workflow list', ['workflow', 'list', '--namespace', namespace, '--limit', '1']);
  } catch (err) {
    const output = out;
    await destroy();
    throw new Error(`${(err as Error).message}\n${output.slice(-3000)}`);
  }
  return { address, namespace, output: () => out, start, stop, destroy };
}
