// Settings re-read from the data directory's config file while the service runs. The spec ("Limits")
// has the global concurrent workflow limit `autonomous.agent_max_concurrent_workflows` "re-read each
// scheduling cycle"; the scheduler (activities/autonomous/scheduling.ts) calls `refreshLiveSettings`
// before every slot claim. Cheap: one stat of the file; it is read again only when its mtime, ctime,
// size or inode changed. An environment override (`SVC_AUTONOMOUS__...`) keeps winning, as at start.
// An unreadable or invalid file keeps the last good values and is reported once per file version; a
// removed file leaves the defaults. Only the keys below change: the rest of the settings stay as
// loaded at start.
import { statSync } from 'node:fs';
import { configFilePath, readFileSection, type Settings } from './settings.ts';

const LIVE_AUTONOMOUS_KEYS = ['agent_max_concurrent_workflows', 'max_concurrent_workflows'] as const;

/** The config file version each settings object last applied (or refused). */
const applied = new WeakMap<Settings, string>();

function fileVersion(dataDir: string): string {
  const file = configFilePath(dataDir);
  if (!file) return 'none';
  try {
    const st = statSync(file);
    return `${file}:${st.mtimeMs}:${st.ctimeMs}:${st.size}:${st.ino}`;
  } catch {
    return 'none'; // removed between the lookup and the stat
  }
}

/** Applies the config file's live keys to `settings` when the file changed since the last call. */
export function refreshLiveSettings(settings: Settings, warn: (message: string) => void): void {
  const version = fileVersion(settings.dataDir);
  const before = applied.get(settings);
  if (before === version) return;
  applied.set(settings, version);
  // No file now and none seen before: the settings are what start-up made of no file (tests that set
  // a value on the object directly keep it).
  if (before === undefined && version === 'none') return;
  let section: Settings['autonomous'];
  try {
    section = readFileSection('autonomous', settings.dataDir);
  } catch (err) {
    warn(
      `the config file changed but cannot be used (${(err as Error).message}); the autonomous concurrency limit stays ${settings.autonomous.agent_max_concurrent_workflows ?? settings.autonomous.max_concurrent_workflows ?? 'the default'}`,
    );
    return;
  }
  for (const key of LIVE_AUTONOMOUS_KEYS) {
    const source = `autonomous.${key}`;
    if (settings.sources[source] === 'env') continue;
    settings.autonomous[key] = section[key];
    settings.sources[source] = section[key] === undefined ? 'default' : 'file';
  }
}
