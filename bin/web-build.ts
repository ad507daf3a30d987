// Builds the web application (web/ -> web/dist) with Vite when the build is missing or stale: older
// than any file in web/src, web/index.html, web/vite.config.ts or its plugin web/precompress.ts. Used
// by `npm start` before it listens and by the test runner before browser tests; `npm run build:web` builds unconditionally.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const WEB = path.join(REPO_ROOT, 'web');
const BUILT = path.join(WEB, 'dist', 'index.html');

function newestMtime(p: string): number {
  const st = statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const name of readdirSync(p)) newest = Math.max(newest, newestMtime(path.join(p, name)));
  return newest;
}

/** Why a build is needed ('missing' | 'stale'), or null when web/dist is current. */
export function webBuildNeeded(): 'missing' | 'stale' | null {
  if (!existsSync(BUILT)) return 'missing';
  const built = statSync(BUILT).mtimeMs;
  const sources = [
    path.join(WEB, 'src'),
    path.join(WEB, 'index.html'),
    path.join(WEB, 'vite.config.ts'),
    path.join(WEB, 'precompress.ts'),
  ];
  const newest = Math.max(...sources.filter(existsSync).map(newestMtime));
  return newest > built ? 'stale' : null;
}

/** Runs `vite build` from the repository root; rejects with Vite's output when it fails. */
export function buildWeb(): Promise<void> {
  const vite = path.join(REPO_ROOT, 'node_modules', 'vite', 'bin', 'vite.js');
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [vite, 'build', '--config', 'web/vite.config.ts', '--logLevel', 'warn'],
      {
        cwd: REPO_ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`vite build failed (exit ${code}):\n${out.slice(-4000)}`)),
    );
  });
}

/** Builds when missing or stale; logs one line saying so. Returns whether it built. */
export async function ensureWebBuilt(log: (line: string) => void): Promise<boolean> {
  const why = webBuildNeeded();
  if (!why) return false;
  const started = Date.now();
  await buildWeb();
  log(`built the web application (web/dist was ${why}) in ${Date.now() - started} ms`);
  return true;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildWeb();
  console.log('web/dist built');
}
