// How a test starts one of our programs (the agent, the API, the worker) as a child process: from the
// bundle `npm test` built for it (test/support/bundle-tests.ts; same code, about 3 CPU-seconds less per
// start than tsx loading its modules one by one), or from the source through tsx when run otherwise.
// Tests whose subject is the command a user types (start.test, api-first-admin, migrations) spawn that
// command themselves instead.
import { existsSync } from 'node:fs';
import path from 'node:path';

/** The programs `npm test` bundles beside the test files (paths from the repository root). */
export const BUNDLED_PROGRAMS = ['agent/main.ts', 'bin/api.ts', 'bin/worker.ts'];

/** Where the bundle of `source` (a path from the repository root) lies in a bundle directory. */
export const bundlePathOf = (dir: string, source: string) =>
  path.join(dir, source.replace(/\.[cm]?tsx?$/, '.mjs'));

/** Node's arguments that run `script` from its source, as the package's npm scripts do. */
export const sourceEntry = (script: string): string[] => ['--import', 'tsx', script];

/** Node's arguments that run `script` (a path from the repository root, e.g. 'bin/api.ts'). */
export function nodeEntry(script: string): string[] {
  const dir = process.env.TEST_BUNDLE_DIR;
  const bundle = dir ? bundlePathOf(dir, script) : undefined;
  return bundle && existsSync(bundle) ? [bundle] : sourceEntry(script);
}
