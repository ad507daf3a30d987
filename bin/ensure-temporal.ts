// `npm run temporal:install`: finds or builds the Temporal CLI ahead of time (CI, first-time setup).
import { findTemporalCli } from './temporal-cli.ts';

findTemporalCli({ explicit: process.env.TEMPORAL_CLI_PATH, log: (l) => console.log(l) }).then(
  (p) => console.log(`Temporal CLI: ${p}`),
  (err) => {
    console.error(err.message);
    process.exit(1);
  },
);
