// A node:test reporter that writes one JSON line per test file: how long its top-level tests took in
// all (test/run.ts passes it beside the spec reporter and prints the slowest files when the run ends,
// so a slow CI run says where its time went). Plain JavaScript: the test runner loads reporters before
// any loader hook (tsx) applies.

/** @param {AsyncIterable<{ type: string, data: { nesting: number, file?: string, details: { duration_ms?: number } } }>} source */
export default async function* fileTimes(source) {
  /** @type {Map<string, { ms: number, tests: number }>} */
  const byFile = new Map();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { nesting, file, details } = event.data;
    if (nesting !== 0 || file === undefined) continue;
    const entry = byFile.get(file) ?? { ms: 0, tests: 0 };
    entry.ms += details.duration_ms ?? 0;
    entry.tests += 1;
    byFile.set(file, entry);
  }
  for (const [file, { ms, tests }] of byFile)
    yield `${JSON.stringify({ file, ms: Math.round(ms), tests })}\n`;
}
