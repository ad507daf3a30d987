// `npm run api`: the HTTP API alone (scale-out), against DATABASE_URL and TEMPORAL_ADDRESS. It never
// migrates; the schema must already be inside this build's compatibility window.
// On an empty database it creates the first platform administrator, as `npm start` does (the API is
// what a person logs in to; the migration job stays DDL only, and the worker serves no login):
// SVC_ADMIN_USERNAME / SVC_ADMIN_PASSWORD, else a generated password printed once by the one instance
// that created it (N instances starting together: the unique username decides, bootstrap-admin.ts).

import { loadSettings, SettingsError } from '../config/settings.ts';
import { prepareDatabase, StartupError } from './startup.ts';

const say = (line: string) => console.log(`[svc-api] ${line}`);

async function main() {
  const settings = loadSettings();
  if (!settings.TEMPORAL_ADDRESS)
    throw new StartupError('npm run api needs TEMPORAL_ADDRESS (the Temporal frontend, host:port).');
  const database = await prepareDatabase(settings, { migrate: false, log: say });
  // The API itself is loaded once the settings and the schema are accepted (bin/startup.ts).
  const [{ bootstrapAdmin }, { buildDeps, connectTemporal, listen, makeLogger, onShutdown }] =
    await Promise.all([import('./bootstrap-admin.ts'), import('./runtime.ts')]);
  await bootstrapAdmin(
    database,
    { username: settings.SVC_ADMIN_USERNAME, password: settings.SVC_ADMIN_PASSWORD },
    say,
  );
  const temporal = connectTemporal(settings, settings.TEMPORAL_ADDRESS);
  const deps = buildDeps(settings, database, temporal, makeLogger(settings));
  const api = await listen(deps);
  onShutdown(
    [
      { name: 'api', run: () => api.close() },
      { name: 'temporal client', run: () => temporal.close() },
      { name: 'database', run: () => database.close() },
    ],
    say,
  );
  say(`API listening on ${api.url} (Temporal ${settings.TEMPORAL_ADDRESS}, database ${settings.dialect})`);
}

main().catch((err) => {
  console.error(
    `[svc-api] ${err instanceof SettingsError || err instanceof StartupError ? err.message : err.stack}`,
  );
  process.exit(1);
});
