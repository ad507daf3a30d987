import { autonomousActivityEvents } from '../../db/schema/index.ts';
import { defineMigration } from '../migration.ts';

// The autonomous live activity stream across processes (issue 27 item 2): the runner in a worker
// stores its events, every API instance streams them (woken by LISTEN/NOTIFY on PostgreSQL) and
// replays them from Last-Event-ID. Expand: a new table no older build reads.
export default defineMigration({
  id: '0036_autonomous_activity_events',
  kind: 'expand',
  description: 'autonomous_activity_events: the stored live activity stream of autonomous workflows',
  creates: [autonomousActivityEvents],
});
