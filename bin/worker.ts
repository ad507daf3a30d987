// `npm run worker`: one Temporal worker alone (scale-out), against DATABASE_URL and TEMPORAL_ADDRESS.

import { loadSettings, SettingsError } from '../config/settings.ts';
import { prepareDatabase, StartupError } from './startup.ts';

const say = (line: string) => console.log(`[svc-worker] ${line}`);

async function main() {
  const settings = loadSettings();
  if (!settings.TEMPORAL_ADDRESS)
    throw new StartupError('npm run worker needs TEMPORAL_ADDRESS (the Temporal frontend, host:port).');
  const database = await prepareDatabase(settings, { migrate: false, log: say });
  // The worker itself is loaded once the settings and the schema are accepted (bin/startup.ts).
  const { onShutdown, runWorker } = await import('./runtime.ts');
  const worker = await runWorker(settings, settings.TEMPORAL_ADDRESS, database, say);
  onShutdown(
    [
      { name: 'worker', run: () => worker.stop() },
      { name: 'database', run: () => database.close() },
    ],
    say,
  );
  say(`worker polling task queue ${settings.TEMPORAL_TASK_QUEUE} on ${settings.TEMPORAL_ADDRESS}`);
  await worker.done;
}

main().catch((err) => {
  console.error(
    `[svc-worker] ${err instanceof SettingsError || err instanceof StartupError ? err.message : err.stack}`,
  );
  process.exit(1);
});
