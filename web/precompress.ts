// Precompressed copies of the built assets (issue 14 "Measure": < 300 kB compressed JavaScript on the
// dashboard's first load). After `vite build` writes web/dist, every text asset under assets/ of at
// least MIN_BYTES gets a Brotli (`.br`, quality 11) and a gzip (`.gz`, level 9) twin beside it, kept
// only when smaller than the original. api/web-app.ts serves the twin the browser accepts, with
// Content-Encoding and Vary: Accept-Encoding. Compressing once at build time (not per request) gives
// the best ratio for free at serve time, keeps the request path a plain file send, and needs no
// compression middleware in the API (whose JSON and SSE responses are not compressed by this).

import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/** Extensions worth compressing (fonts and images other than SVG are compressed already). */
export const COMPRESSIBLE = new Set(['.js', '.mjs', '.css', '.svg', '.json', '.html', '.txt', '.map']);
/** Below this a compressed copy saves less than a packet. */
export const MIN_BYTES = 1024;

/** Writes the .br and .gz twins of the compressible files in `dir` (not recursive); returns their names. */
export function precompressDir(dir: string): string[] {
  const written: string[] = [];
  for (const name of readdirSync(dir)) {
    const file = path.join(dir, name);
    if (!COMPRESSIBLE.has(path.extname(name)) || !statSync(file).isFile()) continue;
    const body = readFileSync(file);
    if (body.length < MIN_BYTES) continue;
    const twins: Array<[string, Buffer]> = [
      [
        '.br',
        brotliCompressSync(body, {
          params: {
            [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
            [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
          },
        }),
      ],
      ['.gz', gzipSync(body, { level: 9 })],
    ];
    for (const [ext, packed] of twins) {
      if (packed.length >= body.length) continue;
      writeFileSync(file + ext, packed);
      written.push(name + ext);
    }
  }
  return written;
}

/** The Vite plugin: precompresses `<outDir>/assets` once the bundle is written. */
export function precompressPlugin(assetsDir = 'assets') {
  return {
    name: 'svc-precompress',
    apply: 'build' as const,
    writeBundle(options: { dir?: string }) {
      if (!options.dir) return;
      const dir = path.join(options.dir, assetsDir);
      precompressDir(dir);
    },
  };
}
