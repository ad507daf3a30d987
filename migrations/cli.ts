// `npm run migrate -- upgrade head | downgrade [revision] | current | history | freeze <revision>|pending [--force]`
import { loadSettings, SettingsError } from '../config/settings.ts';
import { openDatabase } from '../db/client.ts';
import { freeze } from './freeze.ts';
import { MIGRATIONS, MIN_COMPATIBLE } from './index.ts';
import { checkCompatibility, currentRevision, downgrade, upgrade } from './runner.ts';

const usage =
  'usage: npm run migrate -- upgrade [head|<revision>] | downgrade [<revision>|base] | current | history\n' +
  '       npm run migrate -- freeze <revision>...|pending [--force]   (writes migrations/sql; no database)';

async function main(argv: string[]) {
  const [cmd, arg] = argv;
  const log = (line: string) => console.log(line);
  if (cmd === 'freeze') {
    const targets = argv.slice(1).filter((a) => a !== '--force');
    if (!targets.length) throw new Error(usage);
    const done = await freeze(MIGRATIONS, targets, { force: argv.includes('--force'), log });
    if (!done.length) log('nothing to freeze');
    return;
  }
  if (cmd === 'history') {
    for (const m of MIGRATIONS) log(`${m.id}  [${m.kind ?? 'contract'}]  ${m.description}`);
    log(`oldest application revision that can serve head: ${MIN_COMPATIBLE}`);
    return;
  }
  const settings = loadSettings();
  const handle = await openDatabase({ databaseUrl: settings.DATABASE_URL, sqlitePath: settings.sqlitePath });
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
