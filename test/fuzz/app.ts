// The fuzz's target: one real Temporal dev server (in memory, free ports) and the real API with a
// worker on a fresh database (SQLite, or a new PostgreSQL database when DATABASE_URL is set), exactly
// as the integration tests start it (test/support/harness.ts).
import { findTemporalCli } from '../../bin/temporal-cli.ts';
import { type DevServer, startDevServer } from '../../bin/temporal-dev.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';

export interface FuzzTarget {
  app: TestApp;
  stop(): Promise<void>;
}

export async function startFuzzTarget(log: (l: string) => void): Promise<FuzzTarget> {
  let dev: DevServer | undefined;
  if (!process.env.TEST_TEMPORAL_ADDRESS) {
    const cliPath = await findTemporalCli({ explicit: process.env.TEMPORAL_CLI_PATH, log });
    dev = await startDevServer({ cliPath, ephemeralPorts: true, inMemory: true });
    process.env.TEST_TEMPORAL_ADDRESS = dev.address;
    process.env.TEMPORAL_CLI_PATH = cliPath;
  }
  try {
    const app = await startTestApp({ worker: true });
    return {
      app,
      async stop() {
        await app.close();
        await dev?.stop();
      },
    };
  } catch (error) {
    await dev?.stop();
    throw error;
  }
}
