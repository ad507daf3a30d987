// `npm test` runs each test file as one esbuild bundle of our code (npm packages stay external), not
// through tsx module by module. Why: every test file is its own process, and loading the ~525
// TypeScript modules of the app through tsx's loader hooks cost about 5 CPU-seconds per process on
// this 2-core machine, against about 2 for the same code as one ESM bundle; over the ~460 test
// processes of a CI run that is roughly a fifth of all its CPU time.
//
// What keeps the bundle faithful to the sources:
// - each module's `import.meta.url`, `.dirname` and `.filename` are replaced by its own source
//   location, so paths computed from them (migrations, fixtures, the agent's files, the web build)
//   are the same as when the source runs;
// - the bundles live under node_modules/.cache, so their bare imports resolve to the repository's
//   node_modules; code splitting keeps each module once per process (shared chunks);
// - no tsx in a bundle's process: registering its loader hooks costs about 0.3 CPU-seconds per process
//   (a hooks thread that loads tsx and esbuild) and slows every later import. A `.ts` module loaded by a
//   computed path (the web app's route table) goes through tsx's `tsImport` where it is loaded; a worker
//   thread registers tsx itself (services/usage/message-writer-boot.mjs).
// TEST_BUNDLE=0 runs the sources through tsx instead (e.g. for a debugger's breakpoints).
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { bundlePathOf } from './node-entry.ts';

const OUR_SOURCE = /\.(ts|tsx|mts|mjs|js)$/;

/**
 * TypeScript modules our code starts as worker threads (by `new URL('./x.ts', import.meta.url)`, through
 * a boot file that registers tsx first). A bundle's process hands such a thread the module's bundle
 * instead: registering tsx and compiling the module's imports cost every PostgreSQL test app about
 * 1.2 CPU-seconds at its start (the message writer thread).
 */
const THREAD_MODULES = ['services/usage/message-writer-worker.ts'];
const THREAD_URL = /new URL\('(\.{1,2}\/[^']+\.ts)', import\.meta\.url\)/g;

/**
 * Replaces `import.meta.url|dirname|filename` in each of our modules by that module's own location,
 * and a thread module's URL (THREAD_MODULES) by its bundle's in `outDir`.
 */
const ownLocation = (outDir: string): Plugin => ({
  name: 'own-import-meta',
  setup(b) {
    b.onLoad({ filter: OUR_SOURCE }, (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const source = readFileSync(args.path, 'utf8');
      if (!source.includes('import.meta.')) return undefined;
      const contents = source
        .replaceAll(THREAD_URL, (whole, relative: string) => {
          const module = path.relative('.', path.resolve(path.dirname(args.path), relative));
          if (!THREAD_MODULES.includes(module.split(path.sep).join('/'))) return whole;
          return `new URL(${JSON.stringify(pathToFileURL(path.resolve(bundlePathOf(outDir, module))).href)})`;
        })
        .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href))
        .replaceAll('import.meta.dirname', JSON.stringify(path.dirname(args.path)))
        .replaceAll('import.meta.filename', JSON.stringify(args.path));
      const ext = path.extname(args.path);
      const loader = ext === '.tsx' ? 'tsx' : ext === '.ts' || ext === '.mts' ? 'ts' : 'js';
      return { contents, loader };
    });
  },
});

export interface TestBundles {
  /** The bundle to run for each unit (a file, or a group of files run in one process), in order. */
  entries: string[];
  /** The test file a bundle was built from, or a group's description (for reports). */
  sourceOf(bundle: string): string;
}

/**
 * Bundles each unit of `units` (test files, paths relative to the repository root) into `outDir`
 * (under the repository), with `programs` (the agent, the API...) beside them for the tests that start
 * them (support/node-entry.ts). A unit of one file is that file's bundle; a unit of several is one
 * bundle that runs them one after another in one process, each as a suite of its own
 * (support/test-groups.ts).
 */
export async function bundleTestFiles(
  units: string[][],
  outDir: string,
  programs: string[] = [],
): Promise<TestBundles> {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(path.join(outDir, 'groups'), { recursive: true });
  // Node's test runner starts the files it is given in the order of their paths, not in the order
  // given: each unit's bundle is named after its place (units/007-….mjs), so they start as `units` lists
  // them (test/run.ts puts the longest first).
  const named = units.map((unit, i) => {
    const place = String(i + 1).padStart(3, '0');
    const name = unit.length === 1 ? path.basename(unit[0]!).replace(/\.ts$/, '') : `group-of-${unit.length}`;
    const source = unit.length === 1 ? unit[0]! : writeGroupSource(outDir, place, unit);
    return { unit, in: source, out: `units/${place}-${name}` };
  });
  await build({
    entryPoints: [...named.map((u) => ({ in: u.in, out: u.out })), ...programs, ...THREAD_MODULES],
    outdir: outDir,
    outbase: '.',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    plugins: [ownLocation(outDir)],
    logLevel: 'error',
  });
  const entries = named.map((u) => path.join(outDir, `${u.out}.mjs`));
  const sources = new Map(
    named.map(({ unit }, i) => [
      path.resolve(entries[i]!),
      unit.length === 1 ? unit[0]! : `a group of ${unit.length} files (${unit.join(', ')})`,
    ]),
  );
  return { entries, sourceOf: (bundle) => sources.get(path.resolve(bundle)) ?? bundle };
}

/**
 * The source of a group's bundle: each file required (not imported) inside its suite, so that esbuild
 * evaluates the file's module right there, synchronously, and its top-level `test()` and hook calls
 * belong to that suite. A file with top-level await cannot be required: esbuild refuses to build it,
 * and such a file is left out of groups (test/run.ts).
 */
function writeGroupSource(outDir: string, name: string, files: string[]): string {
  const source = path.resolve(outDir, 'groups', `${name}.ts`);
  const lines = [
    `import { fileSuite } from ${JSON.stringify(path.resolve('test/support/test-groups.ts'))};`,
    ...files.map(
      (f, i) =>
        `fileSuite(${JSON.stringify(f)}, () => require(${JSON.stringify(path.resolve(f))}), ${i === files.length - 1});`,
    ),
  ];
  writeFileSync(source, `${lines.join('\n')}\n`);
  return source;
}
