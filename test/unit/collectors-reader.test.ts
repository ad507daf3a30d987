// Incremental reading of transcript files (services/collectors/): the first run reads everything, a
// second run after an append reads only the new lines (the bytes and messages counted prove it), a
// file rewritten from scratch is read again from 0, a partial last line waits for its newline, a
// malformed line is reported with its file and line number, and the state file of `npm run collect`
// resumes a run (written atomically, nothing re-sent).
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { emptyProgress, mergeProgress, runTotals } from '../../domain/collectors/progress.ts';
import { collectSource, type OutgoingMessage } from '../../services/collectors/collect-source.ts';
import type { FileState, StateStore } from '../../services/collectors/file-state.ts';
import { readTranscript } from '../../services/collectors/read-transcript.ts';
import { openStateFile } from '../../services/collectors/state-file.ts';
import {
  claudeAssistant,
  claudeFile,
  claudeUser,
  codexFile,
  codexMessage,
  codexMeta,
  codexTokenCount,
  jsonl,
  writeTranscript,
} from '../fixtures/transcripts.ts';

const tmp = () => mkdtempSync(path.join(os.tmpdir(), 'svc-collect-'));
const S = '9f6c1a2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b';
const at = (s: number) => new Date(Date.UTC(2026, 2, 1, 9, 0, s)).toISOString();
const user = (i: number) =>
  claudeUser({ uuid: `u-${i}`, sessionId: S, timestamp: at(i), text: `question ${i}` });
const answer = (i: number) =>
  claudeAssistant({
    uuid: `a-${i}`,
    sessionId: S,
    timestamp: at(i),
    messageId: `msg_${i}`,
    block: { type: 'text', text: `answer ${i}` },
    usage: { input_tokens: 10, output_tokens: 5 },
  });

function memoryState(): StateStore & { map: Map<string, FileState> } {
  const map = new Map<string, FileState>();
  return {
    map,
    get: async (s, p) => map.get(`${s}|${p}`),
    put: async (s, p, st) => {
      map.set(`${s}|${p}`, st);
    },
  };
}

function recordingSink() {
  const seen = new Map<string, OutgoingMessage>();
  const batches: number[] = [];
  return {
    seen,
    batches,
    sink: async (messages: OutgoingMessage[]) => {
      batches.push(messages.length);
      let stored = 0;
      for (const m of messages)
        if (!seen.has(m.message_id)) {
          seen.set(m.message_id, m);
          stored++;
        }
      return { stored, duplicates: messages.length - stored, rejected: 0 };
    },
  };
}

const run = (dir: string, state: StateStore, sink: ReturnType<typeof recordingSink>, extra = {}) =>
  collectSource({
    source: 'claude_code',
    dirs: [dir],
    state,
    sink: sink.sink,
    hostName: 'ws-1',
    senderName: 'dev',
    now: () => new Date(),
    settleMs: 0,
    ...extra,
  });

test('a second run reads only the appended lines', async () => {
  const dir = tmp();
  const file = claudeFile(dir, S);
  writeTranscript(file, jsonl([user(1), answer(2), user(3), answer(4)]));
  const state = memoryState();
  const sink = recordingSink();
  const first = await run(dir, state, sink);
  assert.deepEqual(
    [first.files_seen, first.files_read, first.messages, first.stored, first.duplicates],
    [1, 1, 4, 4, 0],
  );
  const size1 = readFileSync(file).length;
  assert.equal(state.map.get(`claude_code|${file}`)!.byteOffset, size1);
  assert.equal([...sink.seen.values()][0]!.host_name, 'ws-1');
  assert.equal([...sink.seen.values()][0]!.sender_name, 'dev');

  writeTranscript(file, jsonl([user(5), answer(6)]), true);
  const read = await readTranscript('claude_code', file, state.map.get(`claude_code|${file}`), {
    now: new Date(),
    settleMs: 0,
  });
  assert.equal(read.bytesRead, readFileSync(file).length - size1, 'only the appended bytes are read');
  assert.deepEqual(
    read.messages.map((m) => m.message_id),
    ['u-5', 'msg_6'],
  );

  const second = await run(dir, state, sink);
  assert.deepEqual([second.files_read, second.messages, second.stored, second.duplicates], [1, 2, 2, 0]);
  const third = await run(dir, state, sink);
  assert.deepEqual(
    [third.files_seen, third.files_read, third.messages],
    [1, 0, 0],
    'nothing new: nothing read',
  );
});

test('a rewritten file is read again from 0; a shrunk one too', async () => {
  const dir = tmp();
  const file = claudeFile(dir, S);
  writeTranscript(file, jsonl([user(1), answer(2), user(3)]));
  const state = memoryState();
  const sink = recordingSink();
  await run(dir, state, sink);
  // Same length or longer, different head: rewritten from scratch.
  writeTranscript(file, jsonl([user(11), answer(12), user(13), answer(14)]));
  const r = await run(dir, state, sink);
  assert.deepEqual([r.files_rewritten, r.messages, r.stored], [1, 4, 4]);
  // Shrunk: the first two lines only (a head that still matches): read from 0, all duplicates.
  writeTranscript(file, jsonl([user(11), answer(12)]));
  const s = await run(dir, state, sink);
  assert.deepEqual([s.files_rewritten, s.messages, s.stored, s.duplicates], [1, 2, 0, 2]);
});

test('a partial last line waits; a malformed line is an error with file and line', async () => {
  const dir = tmp();
  const file = claudeFile(dir, S);
  const partial = JSON.stringify(user(3)).slice(0, 40);
  writeTranscript(file, `${jsonl([user(1)])}{"type":"user",broken\n${jsonl([answer(2)])}${partial}`);
  const state = memoryState();
  const sink = recordingSink();
  const first = await run(dir, state, sink);
  assert.equal(first.messages, 2);
  assert.deepEqual(first.errors, [{ file, line: 2, error: 'not valid JSON' }]);
  assert.equal(first.error_count, 1);
  writeTranscript(file, `${JSON.stringify(user(3)).slice(40)}\n`, true);
  const second = await run(dir, state, sink);
  assert.deepEqual(
    [second.messages, second.error_count],
    [1, 0],
    'the completed line is read, the error not again',
  );
  assert.ok(sink.seen.has('u-3'));
});

test('an unsettled file keeps its open response for a later run; since skips earlier days', async () => {
  const dir = tmp();
  const file = claudeFile(dir, S);
  writeTranscript(file, jsonl([user(1), answer(2)]));
  const state = memoryState();
  const sink = recordingSink();
  const open = await run(dir, state, sink, { settleMs: 3_600_000 });
  assert.deepEqual([...sink.seen.keys()], ['u-1'], 'msg_2 may still grow');
  assert.equal(open.messages, 1);
  await run(dir, state, sink, { settleMs: 3_600_000, now: () => new Date(Date.now() + 7_200_000) });
  assert.deepEqual([...sink.seen.keys()], ['u-1', 'msg_2'], 'settled: handed out');

  const later = tmp();
  const codex = codexFile(later, S);
  writeTranscript(
    codex,
    jsonl([
      codexMeta(S, '2026-02-28T10:00:00Z'),
      codexMessage('2026-02-28T10:00:01Z', 'user', 'old'),
      codexMessage('2026-03-02T10:00:01Z', 'user', 'new'),
      codexMessage('2026-03-02T10:00:02Z', 'assistant', 'ok'),
      codexTokenCount('2026-03-02T10:00:03Z', { input_tokens: 7, output_tokens: 3 }),
    ]),
  );
  const codexSink = recordingSink();
  const r = await collectSource({
    source: 'codex',
    dirs: [later, path.join(later, 'missing')],
    state: memoryState(),
    sink: codexSink.sink,
    hostName: 'h',
    senderName: 'dev',
    now: () => new Date(),
    settleMs: 0,
    since: '2026-03-01',
  });
  assert.deepEqual(
    [...codexSink.seen.values()].map((m) => m.content),
    ['new', 'ok'],
  );
  assert.equal([...codexSink.seen.values()][1]!.tokens_used, 10);
  assert.deepEqual(r.missing_dirs, [path.join(later, 'missing')]);
});

test('batches of batchSize; the state file resumes a run and is written atomically', async () => {
  const dir = tmp();
  for (let f = 0; f < 3; f++)
    writeTranscript(
      claudeFile(dir, `0000000${f}-0000-4000-8000-000000000000`),
      jsonl(
        [0, 1, 2].map((i) => claudeUser({ uuid: `f${f}-u${i}`, sessionId: S, timestamp: at(i), text: 'x' })),
      ),
    );
  const stateDir = tmp();
  const statePath = path.join(stateDir, 'nested', 'collect-state.json');
  const sink = recordingSink();
  const first = await run(dir, await openStateFile(statePath), sink, { batchSize: 4 });
  assert.deepEqual(sink.batches, [4, 4, 1]);
  assert.equal(first.stored, 9);
  const saved = JSON.parse(readFileSync(statePath, 'utf8'));
  assert.equal(saved.version, 1);
  assert.equal(Object.keys(saved.files.claude_code).length, 3);
  assert.deepEqual(readdirSync(path.dirname(statePath)), ['collect-state.json'], 'no temporary file left');
  const second = await run(dir, await openStateFile(statePath), sink, { batchSize: 4 });
  assert.deepEqual([second.files_read, second.messages], [0, 0]);
  assert.deepEqual(sink.batches, [4, 4, 1], 'the resumed run sends nothing');

  const broken = path.join(stateDir, 'broken.json');
  writeFileSync(broken, '{"files": 1}');
  await assert.rejects(openStateFile(broken), /not a collect state file/);
});

test('a source read in bounded slices resumes after the last file; the slices add up', async () => {
  const dir = tmp();
  for (let f = 0; f < 5; f++)
    writeTranscript(
      claudeFile(dir, `1000000${f}-0000-4000-8000-000000000000`),
      jsonl([claudeUser({ uuid: `s${f}`, sessionId: S, timestamp: at(f), text: 'x' })]),
    );
  const state = memoryState();
  const sink = recordingSink();
  let total = emptyProgress('claude_code');
  let slices = 0;
  do {
    const slice = await run(dir, state, sink, { afterPath: total.last_path, maxFiles: 2 });
    total = mergeProgress(total, slice);
    slices++;
  } while (!total.done);
  assert.equal(slices, 3);
  assert.deepEqual(runTotals([total]), {
    filesRead: 5,
    messagesRead: 5,
    messagesStored: 5,
    duplicates: 0,
    errorCount: 0,
  });
  assert.equal(sink.seen.size, 5);
});
