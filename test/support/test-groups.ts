// Several test files in one process (test/support/bundle-tests.ts builds the group's bundle, test/run.ts
// chooses the groups). Why: a test process that loads the app spends about 2 CPU-seconds loading and
// compiling modules before its first test, and a CI run started some 430 of them, on 2 cores, twice.
// A group pays that once for all of its files.
//
// Each file of a group becomes one suite named by the file's path, so its own `before`, `after`,
// `beforeEach` and tests apply within it as they do when the file is its own process, and the files run
// one after another. What a file changes in the process environment is undone when its suite ends.
import { after, describe } from 'node:test';

let grouped = false;

/** Whether this process runs a group of test files (a file's own "exit if stuck" guard must not fire then). */
export const inTestGroup = () => grouped;

const groupEnv = { ...process.env };

function restoreEnv(): void {
  for (const key of Object.keys(process.env)) if (!(key in groupEnv)) delete process.env[key];
  Object.assign(process.env, groupEnv);
}

/**
 * The suite of one file of a group: `load` evaluates the file's module (synchronously, so its top-level
 * `test` and hook calls land in this suite). The last file arms a guard: once everything has closed the
 * process exits by itself; if a handle was left open, it ends 60 s later saying which.
 */
export function fileSuite(file: string, load: () => unknown, last: boolean): void {
  grouped = true;
  describe(file, () => {
    load();
    after(restoreEnv);
    if (last) after(() => exitIfStuck('after the last file of this test group ended'));
  });
}

/**
 * Ends this process 60 s from now if it is still alive then, saying what kept it (an unref'd timer: a
 * process that closed everything exits long before). `since` says from when, in the message.
 */
export function exitIfStuck(since: string): void {
  setTimeout(() => {
    console.error(`# still alive 60 s ${since}: ${process.getActiveResourcesInfo().join(', ')}`);
    process.exit();
  }, 60_000).unref();
}
