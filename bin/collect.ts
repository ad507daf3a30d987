// `npm run collect`: the standalone uploader for a workstation or cron (issue 10 item 3). Reads the
// local Claude Code and Codex transcripts with the same readers as the server's collection runs and
// posts new messages in batches to POST /api/upload/batch. Remembers how far each file was read in a
// state file, written after each accepted batch, so a second run uploads only what is new.
//
//   npm run collect -- --server URL [--upload-token TOKEN | --upload-key KEY] [--since YYYY-MM-DD] [--state FILE]
//                      [--claude-dir DIR]... [--codex-dir DIR]... [--host NAME] [--sender NAME]
//                      [--batch-size N] [--settle-seconds N] [--dry-run]
//
// A personal upload token (svcup_..., made in the web app or with POST /api/upload-tokens; every row
// counts for its owner) or the server's shared key (trusted collectors). Either may come from the
// environment (SVC_UPLOAD_TOKEN, SVC_UPLOAD_AUTH_KEY) so it does not show in `ps`. Exit codes:
// 0 done (unreadable lines are reported, not fatal), 1 bad arguments or state file, 2 the server
// refused the upload (401/403/503, other HTTP errors) or could not be reached.
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { SourceProgress } from '../domain/collectors/progress.ts';
import { TRANSCRIPT_SOURCES, type TranscriptSource } from '../domain/collectors/sources.ts';
import { isCalendarDate } from '../domain/usage/ingest-rows.ts';
import { collectSource, type MessageSink } from '../services/collectors/collect-source.ts';
import type { StateStore } from '../services/collectors/file-state.ts';
import { openStateFile } from '../services/collectors/state-file.ts';
import { UploadError, uploadSink } from '../services/collectors/upload-sink.ts';

const USAGE = `usage: npm run collect -- --server URL [--upload-token TOKEN | --upload-key KEY] [--since YYYY-MM-DD] [--state FILE]
       [--claude-dir DIR]... [--codex-dir DIR]... [--host NAME] [--sender NAME] [--batch-size N]
       [--settle-seconds N] [--dry-run]
A personal upload token may be given in SVC_UPLOAD_TOKEN instead of --upload-token, the shared upload
key in SVC_UPLOAD_AUTH_KEY instead of --upload-key.`;

const home = os.homedir();
const defaultState = path.join(
  process.env.XDG_CONFIG_HOME || path.join(home, '.config'),
  'svc',
  'collect-state.json',
);

function fail(message: string, code = 1): never {
  process.stderr.write(`collect: ${message}\n`);
  process.exit(code);
}

function positiveInt(name: string, v: string | undefined, fallback: number, min: number): number {
  if (v === undefined) return fallback;
  if (!/^\d{1,9}$/.test(v) || Number(v) < min) fail(`--${name} must be an integer >= ${min}`);
  return Number(v);
}

let args: ReturnType<typeof parse>;
function parse() {
  return parseArgs({
    options: {
      server: { type: 'string' },
      'upload-key': { type: 'string' },
      'upload-token': { type: 'string' },
      since: { type: 'string' },
      state: { type: 'string' },
      'claude-dir': { type: 'string', multiple: true },
      'codex-dir': { type: 'string', multiple: true },
      host: { type: 'string' },
      sender: { type: 'string' },
      'batch-size': { type: 'string' },
      'settle-seconds': { type: 'string' },
      'dry-run': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  }).values;
}
try {
  args = parse();
} catch (err) {
  fail(`${(err as Error).message}\n${USAGE}`);
}
if (args.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const dryRun = args['dry-run'] === true;
const server = args.server;
if (!server && !dryRun) fail(`--server is required\n${USAGE}`);
if (server && !/^https?:\/\/[^\s]+$/i.test(server)) fail('--server must be an http(s) URL');
// Both go in X-Upload-Auth; the server tells a personal token by its svcup_ prefix.
const uploadKey =
  args['upload-token'] ||
  process.env.SVC_UPLOAD_TOKEN ||
  args['upload-key'] ||
  process.env.SVC_UPLOAD_AUTH_KEY;
if (!uploadKey && !dryRun)
  fail('an upload token or key is required: --upload-token TOKEN (SVC_UPLOAD_TOKEN) or --upload-key KEY');
if (args.since !== undefined && !isCalendarDate(args.since)) fail('--since must be a date YYYY-MM-DD');
const batchSize = positiveInt('batch-size', args['batch-size'], 2000, 1);
const settleSeconds = positiveInt('settle-seconds', args['settle-seconds'], 300, 0);
const dirs: Record<TranscriptSource, string[]> = {
  claude_code: args['claude-dir'] ?? [path.join(home, '.claude', 'projects')],
  codex: args['codex-dir'] ?? [path.join(home, '.codex', 'sessions')],
};
const statePath = path.resolve(args.state ?? defaultState);

let fileState: Awaited<ReturnType<typeof openStateFile>>;
try {
  fileState = await openStateFile(statePath);
} catch (err) {
  fail((err as Error).message);
}
// A dry run reads from the remembered offsets but remembers nothing.
const state: StateStore = dryRun ? { get: (s, p) => fileState.get(s, p), put: async () => {} } : fileState;
const sink: MessageSink = dryRun
  ? async () => ({ stored: 0, duplicates: 0, rejected: 0 })
  : uploadSink({ server: server!, uploadKey: uploadKey! });

const line = (p: SourceProgress) =>
  `${p.source}: files ${p.files_seen} (read ${p.files_read}), messages ${p.messages}, stored ${p.stored}, duplicates ${p.duplicates}, errors ${p.error_count}`;
const tty = process.stdout.isTTY === true;

let errors = 0;
for (const source of TRANSCRIPT_SOURCES) {
  let result: SourceProgress;
  try {
    result = await collectSource({
      source,
      dirs: dirs[source],
      state,
      sink,
      hostName: args.host ?? os.hostname(),
      senderName: args.sender ?? os.userInfo().username,
      now: () => new Date(),
      settleMs: settleSeconds * 1000,
      since: args.since,
      batchSize,
      onProgress: (p) => {
        if (tty) process.stdout.write(`\r${line(p)}`);
      },
    });
  } catch (err) {
    if (tty) process.stdout.write('\n');
    if (err instanceof UploadError) fail(err.message, 2);
    throw err;
  }
  process.stdout.write(`${tty ? '\r' : ''}${line(result)}${dryRun ? ' (dry run: nothing uploaded)' : ''}\n`);
  for (const e of result.errors.slice(0, 10)) process.stderr.write(`  ${e.file}:${e.line}: ${e.error}\n`);
  errors += result.error_count;
}
if (!dryRun) process.stdout.write(`state: ${statePath}\n`);
if (errors)
  process.stderr.write(`collect: ${errors} line(s) could not be read (see above); they are skipped\n`);
