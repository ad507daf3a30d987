// What the API needs from the outside, handed in by the entry point (bin/) or a test.
import type { Logger } from 'pino';
import type { Settings } from '../config/settings.ts';
import type { DatabaseHandle } from '../db/client.ts';
import type { Metrics } from './metrics.ts';
import type { TemporalAccess } from './temporal.ts';

export interface AppDeps {
  settings: Settings;
  database: DatabaseHandle;
  temporal: TemporalAccess;
  logger: Logger;
  metrics: Metrics;
  /** Injectable clock (tests move time instead of waiting). */
  now: () => Date;
}
