// What every activity is built from (the worker hands it to createActivities). Its own file so the
// activity modules do not import the index that imports them.
import type { Settings } from '../config/settings.ts';
import type { DatabaseHandle } from '../db/client.ts';

export interface ActivityDeps {
  database: DatabaseHandle;
  settings: Settings;
  now: () => Date;
}
