// The resumable state of `npm run collect`: a JSON file {version: 1, files: {<source>: {<path>:
// FileState}}}. Written only when something changed, after each accepted batch, atomically (a
// temporary file in the same folder, then rename), so an interrupted run never leaves half a file.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FileState, StateStore } from './file-state.ts';

type Files = Record<string, Record<string, FileState>>;

const isState = (v: unknown): v is FileState =>
  typeof v === 'object' &&
  v !== null &&
  Number.isSafeInteger((v as FileState).byteOffset) &&
  Number.isSafeInteger((v as FileState).size) &&
  typeof (v as FileState).headHash === 'string';

export async function openStateFile(file: string): Promise<StateStore & { files: Files }> {
  let files: Files = {};
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as { version?: number; files?: unknown };
    if (parsed?.version !== 1 || typeof parsed.files !== 'object' || parsed.files === null)
      throw new Error('not a collect state file (version 1)');
    files = parsed.files as Files;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new Error(`Cannot read the state file ${file}: ${(err as Error).message}`);
  }
  let dirty = false;
  return {
    files,
    async get(source, p) {
      const s = files[source]?.[p];
      return isState(s) ? s : undefined;
    },
    async put(source, p, state) {
      const before = files[source]?.[p];
      if (
        before &&
        before.byteOffset === state.byteOffset &&
        before.size === state.size &&
        before.headHash === state.headHash
      )
        return;
      files[source] ??= {};
      files[source][p] = state;
      dirty = true;
    },
    async commit() {
      if (!dirty) return;
      await mkdir(path.dirname(file), { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      await writeFile(tmp, `${JSON.stringify({ version: 1, files }, null, 1)}\n`, { mode: 0o600 });
      await rename(tmp, file);
      dirty = false;
    },
  };
}
