// Schemathesis for `npm run fuzz`: the pinned version in a virtual environment under the per-user
// cache (~/.cache/svc/schemathesis-<version>, reused when present, built with python3 -m venv and pip
// from the package registry otherwise), and one run of it as a subprocess.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const SCHEMATHESIS_VERSION = '4.32.5';

export const venvDir = () => path.join(os.homedir(), '.cache', 'svc', `schemathesis-${SCHEMATHESIS_VERSION}`);

function run(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; quiet?: boolean } = {}) {
  return new Promise<{ code: number; out: string }>((resolve, reject) => {
    const child = spawn(cmd, args, { env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const take = (b: Buffer) => {
      out += b.toString();
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), out }));
  });
}

/** The `st` executable of the pinned version, installed first when missing. */
export async function ensureSchemathesis(log: (l: string) => void): Promise<string> {
  const dir = venvDir();
  const st = path.join(dir, 'bin', 'st');
  if (existsSync(st)) {
    const v = await run(st, ['--version']);
    if (v.code === 0 && v.out.includes(SCHEMATHESIS_VERSION)) return st;
  }
  log(`installing schemathesis ${SCHEMATHESIS_VERSION} into ${dir} (once; later runs reuse it)`);
  const venv = await run('python3', ['-m', 'venv', dir]);
  if (venv.code !== 0) throw new Error(`python3 -m venv ${dir} failed:\n${venv.out}`);
  const pip = await run(path.join(dir, 'bin', 'pip'), [
    'install',
    '--quiet',
    '--disable-pip-version-check',
    `schemathesis==${SCHEMATHESIS_VERSION}`,
  ]);
  if (pip.code !== 0)
    throw new Error(`pip install schemathesis==${SCHEMATHESIS_VERSION} failed:\n${pip.out}`);
  return st;
}

export interface StRun {
  st: string;
  schemaUrl: string;
  baseUrl: string;
  headers: Record<string, string>;
  operationIds: string[];
  checks: string[];
  phases: ('examples' | 'coverage' | 'fuzzing')[];
  /** positive: valid inputs only; all: valid and invalid (default). */
  mode?: 'positive' | 'negative' | 'all';
  maxExamples: number;
  maxTimeSeconds: number;
  workers: number;
  seed: number;
  junitPath: string;
  configFile: string;
  hooksFile: string;
  env: Record<string, string>;
}

/** One `st run`; resolves with its exit code and its whole output. */
export function runSchemathesis(o: StRun): Promise<{ code: number; out: string }> {
  const args = [
    '--config-file',
    o.configFile,
    'run',
    o.schemaUrl,
    '--url',
    o.baseUrl,
    '--checks',
    o.checks.join(','),
    '--phases',
    o.phases.join(','),
    '--mode',
    o.mode ?? 'all',
    '--max-examples',
    String(o.maxExamples),
    '--max-time',
    String(o.maxTimeSeconds),
    '--workers',
    String(o.workers),
    '--seed',
    String(o.seed),
    '--request-timeout',
    '15',
    '--generation-with-security-parameters',
    'false',
    '--generation-database',
    'none',
    '--suppress-health-check',
    'all',
    '--report',
    'junit',
    '--report-junit-path',
    o.junitPath,
    '--no-color',
    '--output-sanitize',
    'true',
  ];
  for (const [k, v] of Object.entries(o.headers)) args.push('--header', `${k}: ${v}`);
  for (const id of o.operationIds) args.push('--include-operation-id', id);
  return run(o.st, args, {
    env: { ...process.env, SCHEMATHESIS_HOOKS: o.hooksFile, ...o.env, PYTHONUNBUFFERED: '1' },
  });
}
