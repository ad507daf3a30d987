// A node:test reporter that writes one JSON line per test file: how long its tests took in all
// (test/run.ts passes it beside the spec reporter and prints the slowest files when the run ends, so a
// slow CI run says where its time went). Plain JavaScript: the test runner loads reporters before any
// loader hook (tsx) applies.
//
// A file run in its own process: the sum of its top-level tests, under the process's file. A file run
// in a group (test/support/test-groups.ts): its suite, a top-level suite named by the file's path,
// hooks included, with the tests in it (its plan) counted.

const FILE_SUITE = /\.test\.ts$/;

/** @param {AsyncIterable<{ type: string, data: { nesting: number, name: string, count?: number, file?: string, details: { duration_ms?: number } } }>} source */
export default async function* fileTimes(source) {
  /** @type {Map<string, { ms: number, tests: number }>} */
  const byFile = new Map();
  /** The number of tests in the suite a group process is about to report (its `test:plan`). */
  const planned = new Map();
  for await (const event of source) {
    if (event.type === 'test:plan' && event.data.nesting === 1)
      planned.set(event.data.file, event.data.count);
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { nesting, name, file, details } = event.data;
    if (nesting !== 0 || file === undefined) continue;
    const suite = FILE_SUITE.test(name);
    const key = suite ? name : file;
    const entry = byFile.get(key) ?? { ms: 0, tests: 0 };
    entry.ms += details.duration_ms ?? 0;
    entry.tests += suite ? (planned.get(file) ?? 0) : 1;
    planned.delete(file);
    byFile.set(key, entry);
  }
  for (const [file, { ms, tests }] of byFile)
    yield `${JSON.stringify({ file, ms: Math.round(ms), tests })}\n`;
}
