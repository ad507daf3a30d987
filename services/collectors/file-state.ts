// Where the read state of transcript files (domain/collectors/file-state.ts) is remembered: the server
// keeps it in collector_files (db/repositories/collectors.ts), `npm run collect` in its state file
// (state-file.ts).
import { createHash } from 'node:crypto';
import type { FileState } from '../../domain/collectors/file-state.ts';

export { type FileState, HEAD_BYTES } from '../../domain/collectors/file-state.ts';

export interface StateStore {
  get(source: string, path: string): Promise<FileState | undefined>;
  /** Called once the messages read up to `state.byteOffset` are stored. */
  put(source: string, path: string, state: FileState): Promise<void>;
  /** Called after each accepted batch's puts (a state file is written here, once per batch). */
  commit?(): Promise<void>;
}

export const headHashOf = (head: Buffer) => createHash('sha256').update(head).digest('hex');
