// Finds the transcript files of a source under its configured folders (recursively, not following
// symbolic links), in one stable order so a run can be resumed after the last path it finished.
import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { isTranscriptFile, type TranscriptSource } from '../../domain/collectors/sources.ts';

export async function listTranscriptFiles(
  source: TranscriptSource,
  dirs: readonly string[],
): Promise<{ files: string[]; missingDirs: string[] }> {
  const files: string[] = [];
  const missingDirs: string[] = [];
  async function walk(dir: string, top: boolean) {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      // A folder that does not exist (or cannot be read) holds nothing; the top ones are reported.
      if (top) missingDirs.push(dir);
      return;
    }
    for (const e of entries) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) await walk(p, false);
      else if (e.isFile() && isTranscriptFile(source, e.name)) files.push(p);
    }
  }
  for (const dir of dirs) await walk(path.resolve(dir), true);
  files.sort();
  return { files: [...new Set(files)], missingDirs };
}
