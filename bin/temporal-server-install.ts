// `npm run temporal:install-server`: builds the real Temporal server and temporal-sql-tool ahead of time
// (CI's "Temporal server" step, or an operator's first setup); a second run finds them and says so.
import { installTemporalServer } from './temporal-server.ts';

installTemporalServer().then(
  (bins) => console.log(`Temporal server: ${bins.server}\ntemporal-sql-tool: ${bins.sqlTool}`),
  (err) => {
    console.error(err.message);
    process.exit(1);
  },
);
