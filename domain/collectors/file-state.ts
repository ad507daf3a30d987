// How far a transcript file has been read (collector_files' columns; `npm run collect` keeps the same
// in its state file). Pure data: where it is stored is the services' business.

export interface FileState {
  /** Bytes consumed, up to the last complete (and final) line. */
  byteOffset: number;
  /** The file's size when last read: a smaller size means it was rewritten. */
  size: number;
  /** SHA-256 (hex) of the file's first min(4 KiB, size) bytes: a different head means rewritten. */
  headHash: string;
}

/** How many leading bytes the head hash covers. */
export const HEAD_BYTES = 4096;
