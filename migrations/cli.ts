// `npm run migrate -- upgrade head | downgrade [revision] | current | history`
import { loadSettings, SettingsError } from '../config/settings.ts';
import { openDatabase } from '../db/client.ts';
import { MIGRATIONS } from './index.ts';
import { checkCompatibility, currentRevision, downgrade, upgrade } from './runner.ts';

const usage =
  'usage: npm run migrate -- upgrade [head|<revision>] | downgrade [<revision>|base] | current | history';

async function main(argv: string[]) {
  const [cmd, arg] = argv;
  const settings = loadSettings();
  const handle = await openDatabase({ databaseUrl: settings.DATABASE_URL, sqlitePath: settings.sqlitePath });
  const log = (line: string) => console.log(line);
  try {
    switch (cmd) {
      case 'upgrade': {
        const done = await upgrade(handle, arg ?? 'head', log);
        if (!done.length) log('already at target; nothing to do');
        break;
      }
      case 'downgrade': {
        const done = await downgrade(handle, arg, log);
        if (!done.length) log('nothing to downgrade');
        break;
      }
      case 'current': {
        const c = await checkCompatibility(handle.sql);
        log(
          `current: ${await currentRevision(handle.sql)} (head ${c.required}${c.compatible ? ', compatible' : `, ${c.reason}`})`,
        );
        break;
      }
      case 'history':
        for (const m of MIGRATIONS) log(`${m.id}  ${m.description}`);
        break;
      default:
        console.error(usage);
        process.exitCode = 2;
    }
  } finally {
    await handle.close();
  }
}

main(process.argv.slice(2)).catch((err) => {
  console.error(err instanceof SettingsError ? err.message : `migrate failed: ${err.message}`);
  process.exit(1);
});
