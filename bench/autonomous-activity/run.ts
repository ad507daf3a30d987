// `npm run bench -- autonomous-activity`: what storing the autonomous live stream costs the runner
// (services/autonomous/activity-bus.ts). A fresh database (SQLite, or a new PostgreSQL database with
// DATABASE_URL); per round, a burst of 1000 events published at once (one stdout chunk of many
// stream-json lines) and 1000 events published one per event-loop turn (lines arriving one by one),
// each timed from the first publish to everything stored (flush). Prints the median of 5 rounds and
// how long publish() itself took (what the CLI's stdout handling waits for).
import { openDatabase } from '../../db/client.ts';
import { upgrade } from '../../migrations/runner.ts';
import { activityBusFor } from '../../services/autonomous/activity-bus.ts';
import { workflowRowIn } from '../../test/support/autonomous-rows.ts';
import { createTestDatabase } from '../../test/support/database.ts';

const ROUNDS = 5;
const EVENTS = 1000;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const testDb = await createTestDatabase();
const database = await openDatabase({ databaseUrl: testDb.databaseUrl, sqlitePath: testDb.sqlitePath });
try {
  await upgrade(database, 'head');
  const [u] = await database.db
    .insert(database.t.users)
    .values({ username: 'bench', passwordHash: 'x' })
    .returning({ id: database.t.users.id });
  const bus = activityBusFor(database);
  const event = (workflowId: string, i: number) => ({
    workflowId,
    line: 'main',
    type: 'tool_use' as const,
    at: new Date().toISOString(),
    tool: 'Edit',
    input: JSON.stringify({ file: `src/file-${i}.ts`, old: 'a'.repeat(100), new: 'b'.repeat(100) }),
  });
  const burst: number[] = [];
  const burstPublish: number[] = [];
  const trickle: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const wf = await workflowRowIn(database, u!.id, null, []);
    let t0 = performance.now();
    for (let i = 0; i < EVENTS; i++) bus.publish(event(wf, i));
    burstPublish.push(performance.now() - t0);
    await bus.flush();
    burst.push(performance.now() - t0);

    const wf2 = await workflowRowIn(database, u!.id, null, []);
    t0 = performance.now();
    for (let i = 0; i < EVENTS; i++) {
      bus.publish(event(wf2, i));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await bus.flush();
    trickle.push(performance.now() - t0);
    if ((await bus.lastSeq(wf)) !== EVENTS || (await bus.lastSeq(wf2)) !== EVENTS)
      throw new Error('events missing');
  }
  console.log(
    `${database.dialect}: ${EVENTS} events in one burst: stored in ${median(burst).toFixed(0)} ms ` +
      `(publish() calls ${median(burstPublish).toFixed(1)} ms); one per event-loop turn: all stored ` +
      `${median(trickle).toFixed(0)} ms after the first (median of ${ROUNDS})`,
  );
} finally {
  await database.close();
  await testDb.drop();
}
