// The Temporal dev server of the benchmarks that drive workflows (remote, terminal-relay): the CLI found
// as `npm start` finds it (TEMPORAL_CLI_PATH, PATH, the per-user cache), free ports, state in memory.
// startStack({ temporal: dev.address }) then runs a worker against it.
import { findTemporalCli } from '../../bin/temporal-cli.ts';
import { type DevServer, startDevServer } from '../../bin/temporal-dev.ts';

export async function startBenchTemporal(): Promise<DevServer> {
  const cliPath = await findTemporalCli({
    explicit: process.env.TEMPORAL_CLI_PATH,
    log: (l) => process.stderr.write(`${l}\n`),
  });
  return startDevServer({ cliPath, ephemeralPorts: true, inMemory: true });
}
