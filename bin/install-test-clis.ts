// `npm run clis:install [tool ids]`: installs the pinned real CLIs the real-CLI tests use into the
// per-user cache (test/support/real-clis.ts). A package the registry does not serve is reported and
// skipped (its tests then skip with that reason); the exit code is non-zero only if nothing installed.
import { CLI_PACKAGES, cliPackageSpec } from '../agent/cli-packages.ts';
import { installRealCli } from '../test/support/real-clis.ts';

const wanted = process.argv.slice(2);
const ids = wanted.length ? wanted : Object.keys(CLI_PACKAGES);
let installed = 0;
for (const id of ids) {
  const p = CLI_PACKAGES[id];
  if (!p) {
    console.error(`unknown tool id ${id}; known: ${Object.keys(CLI_PACKAGES).join(', ')}`);
    process.exit(2);
  }
  const started = Date.now();
  const r = await installRealCli(id, (l) => console.log(`[clis] ${l}`));
  if (r.ok) {
    installed++;
    console.log(`[clis] ${id}: ${cliPackageSpec(p)} ready (${Date.now() - started} ms)`);
  } else
    console.log(
      `[clis] ${id}: ${cliPackageSpec(p)} could not be installed; its tests will skip.\n${r.output.trim().split('\n').slice(-5).join('\n')}`,
    );
}
process.exit(installed > 0 ? 0 : 1);
