// `npm start`: the embedded default. One process tree: migrations applied to the SQLite file (or the
// PostgreSQL database), an embedded Temporal dev server (unless TEMPORAL_ADDRESS is set), one worker
// and the HTTP API.
import { mkdirSync } from 'node:fs';
import { loadSettings, SettingsError } from '../config/settings.ts';
import { prepareDatabase, StartupError } from './startup.ts';
import type { DevServer } from './temporal-dev.ts';
import { ensureWebBuilt } from './web-build.ts';

const say = (line: string) => console.log(`[svc] ${line}`);

// Module-level so a startup failure after the dev server started can still stop it.
let dev: DevServer | undefined;

async function main() {
  const started = Date.now();
  const settings = loadSettings();
  mkdirSync(settings.dataDir, { recursive: true });
  say(
    `data directory ${settings.dataDir}; database ${settings.dialect}${settings.production ? '; production mode' : ''}`,
  );
  if (!settings.production && !settings.SVC_ENCRYPTION_KEY)
    say(
      `WARNING: SVC_ENCRYPTION_KEY is not set; stored secrets use a random development key kept in ${settings.dataDir}/dev-secrets.json (mode 0600). Set SVC_ENCRYPTION_KEY before storing real provider keys.`,
    );
  // Production never runs DDL at startup (spec, Versioning 3): migrations are a separate step there.
  const database = await prepareDatabase(settings, { migrate: !settings.production, log: say });
  // The rest is loaded once the settings and the schema are accepted (bin/startup.ts); the service
  // (bin/runtime.ts) loads while the embedded Temporal server starts.
  const runtime = import('./runtime.ts');
  runtime.catch(() => undefined); // awaited below; a failure before that is reported by main
  const { bootstrapAdmin } = await import('./bootstrap-admin.ts');
  await bootstrapAdmin(
    database,
    { username: settings.SVC_ADMIN_USERNAME, password: settings.SVC_ADMIN_PASSWORD },
    say,
  );

  let address = settings.TEMPORAL_ADDRESS;
  if (!address) {
    const [{ findTemporalCli }, { startDevServer }] = await Promise.all([
      import('./temporal-cli.ts'),
      import('./temporal-dev.ts'),
    ]);
    const cliPath = await findTemporalCli({ explicit: settings.TEMPORAL_CLI_PATH, log: say });
    say('starting the embedded Temporal dev server...');
    dev = await startDevServer({
      cliPath,
      dataDir: settings.dataDir,
      config: {
        namespace: settings.TEMPORAL_NAMESPACE,
        ...(settings.SVC_TEMPORAL_DEV_PORT !== undefined ? { port: settings.SVC_TEMPORAL_DEV_PORT } : {}),
        ...(settings.SVC_TEMPORAL_UI_PORT !== undefined ? { ui_port: settings.SVC_TEMPORAL_UI_PORT } : {}),
      },
      ephemeralPorts: settings.SVC_TEMPORAL_DEV_PORT === 0,
      log: say,
    });
    address = dev.address;
  }
  const { buildDeps, connectTemporal, listen, makeLogger, onShutdown, runWorker } = await runtime;
  const worker = await runWorker(settings, address, database, say);
  const temporal = connectTemporal(settings, address);
  const logger = makeLogger(settings);
  const deps = buildDeps(settings, database, temporal, logger);
  // The web application is built before listening when web/dist is missing or older than web/src.
  await ensureWebBuilt(say).catch((err: Error) =>
    say(`WARNING: the web application could not be built (the API runs; / answers 503): ${err.message}`),
  );
  const api = await listen(deps);
  onShutdown(
    [
      { name: 'api', run: () => api.close() },
      { name: 'worker', run: () => worker.stop() },
      { name: 'temporal client', run: () => temporal.close() },
      { name: 'temporal dev server', run: async () => dev?.stop() },
      { name: 'database', run: () => database.close() },
    ],
    say,
  );
  worker.done.catch((err) => {
    say(`worker stopped unexpectedly: ${err.message}`);
    process.exit(1);
  });
  say(`API listening on ${api.url}`);
  say(dev ? `Temporal UI on ${dev.uiUrl} (server ${address})` : `Temporal cluster at ${address}`);
  say(`ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

main().catch(async (err) => {
  console.error(
    `[svc] ${err instanceof SettingsError || err instanceof StartupError ? err.message : err.stack}`,
  );
  await dev?.stop().catch(() => undefined);
  process.exit(1);
});
