// Load generators run as child processes (their own event loop): a node child's stdout, and one
// autocannon run's JSON result.
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import type autocannon from 'autocannon';

const AUTOCANNON = createRequire(import.meta.url).resolve('autocannon/autocannon.js');

/** Runs `node <args>` and resolves with its stdout (rejects when it fails). */
export function nodeChild(args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(process.execPath, args, { maxBuffer: 64 * 1024 * 1024 }, (err, stdout) =>
      err ? reject(err) : resolve(stdout),
    ),
  );
}

export interface CannonRun {
  url: string;
  connections: number;
  seconds: number;
  /** autocannon -p (default: not passed, autocannon's 1). */
  pipelining?: number;
  method?: string;
  body?: string;
  headers?: Record<string, string>;
}

/** One autocannon run in a child process; its JSON result. */
export async function autocannonRun(run: CannonRun): Promise<autocannon.Result> {
  const args = [AUTOCANNON, '--json', '-c', String(run.connections)];
  if (run.pipelining !== undefined) args.push('-p', String(run.pipelining));
  args.push('-d', String(run.seconds));
  if (run.method) args.push('-m', run.method);
  if (run.body !== undefined) args.push('-b', run.body);
  for (const [k, v] of Object.entries(run.headers ?? {})) args.push('-H', `${k}=${v}`);
  args.push(run.url);
  return JSON.parse(await nodeChild(args)) as autocannon.Result;
}
