// `npm run bench -- <name> [args]`: runs bench/<name>/run.ts with the given arguments (each benchmark
// documents its own flags in its README). Without a name it lists the benchmarks.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const names = readdirSync(here, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(path.join(here, d.name, 'run.ts')))
  .map((d) => d.name)
  .sort();

const [name, ...args] = process.argv.slice(2);
if (!name) {
  console.log(
    `benchmarks: ${names.join(', ')}\nrun one with: npm run bench -- <name> [flags] (see bench/<name>/README.md)`,
  );
  process.exit(0);
}
if (!names.includes(name)) {
  console.error(`unknown benchmark "${name}"; choose one of: ${names.join(', ')}`);
  process.exit(2);
}
const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, name, 'run.ts'), ...args], {
  stdio: 'inherit',
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
