// The acceptance snapshot end to end (issue 15 item 6): an issue requirement's issue is read through
// the project's issue tracker (here a small in-memory IssueTracker registered for the project, the
// shape of domain/forge/types.ts), its SHA-256 stored when the workflow starts, the verifier given the
// issue as it reads after the merge (told when it changed since the start), and a `confirmed` verdict
// closes the issue with a comment; a rejected verdict pauses for manual review with the issue left
// open until a human overrides it; a text requirement's snapshot is its text; a tracker that cannot
// close the issue leaves the verdict standing and says so on the row.
// store-independent: the acceptance snapshot's checks; the rows its activities write are covered on both
//   stores by workflow-e2e, workflow-api-e2e, workflow-crash and the chaos tests
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ForgeIssue, ForgeRepository, IssueTracker } from '../../../domain/forge/types.ts';
import { registerEmbeddedIssueTracker } from '../../../services/autonomous/acceptance.ts';
import {
  type Actor,
  temporalWorkflowId,
  verificationOverrideUpdate,
} from '../../../workflows/autonomous/contract.ts';
import { waitForFile } from './runner-support.ts';
import {
  type Script,
  startWorkflowWorld,
  stepScript,
  UNCONFINED,
  type WorkflowWorld,
} from './workflow-support.ts';

let world: WorkflowWorld;
const actor: Actor = { userId: 0, username: 'reviewer-2' };
const cleanups: Array<() => void> = [];

before(async () => {
  world = await startWorkflowWorld({ env: UNCONFINED }); // pid and prompt files in the test's temp dir
  actor.userId = world.userId;
});
after(async () => {
  for (const c of cleanups) c();
  await world?.close();
});

/** An in-memory issue tracker: issues by number, and every close with its comment. */
class MemoryTracker implements IssueTracker {
  issues = new Map<number, ForgeIssue>();
  closes: Array<{ repoKey: string; number: number; comment: string }> = [];
  reads = 0;
  failClose = false;
  add(number: number, title: string, body: string) {
    this.issues.set(number, {
      number,
      title,
      body,
      state: 'open',
      url: `https://forge.example/issues/${number}`,
      updatedAt: new Date(),
    });
  }
  async readIssue(_repo: ForgeRepository, number: number): Promise<ForgeIssue> {
    this.reads++;
    const i = this.issues.get(number);
    if (!i) throw new Error(`issue #${number} not found`);
    return { ...i };
  }
  async closeIssue(repo: ForgeRepository, number: number, comment: string): Promise<void> {
    if (this.failClose) throw new Error('tracker answered 503');
    const i = this.issues.get(number);
    if (!i) throw new Error(`issue #${number} not found`);
    this.closes.push({ repoKey: repo.repoKey, number, comment });
    i.state = 'closed';
  }
}

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const tmpFile = (name: string) =>
  path.join(world.app.settings.SVC_DATA_DIR, `${name}-${Math.random().toString(36).slice(2)}.jsonl`);
const logged = (file: string, step: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { prompt: string })
    .filter((p) => p.prompt.startsWith(`Step: ${step}`));

/** Creates a workflow on a new project with this script (every step logs its prompt) and a tracker. */
async function createWith(script: Script, requirement: string, promptFile: string, tracker?: MemoryTracker) {
  const byStep = Object.fromEntries(Object.entries(script).map(([k, v]) => [k, { ...v, promptFile }]));
  const project = world.project(script, { '.svc-fake/script.json': JSON.stringify({ byStep }) });
  const [wf] = await world.create(project, { requirement });
  if (tracker) cleanups.push(registerEmbeddedIssueTracker(wf!.projectId!, tracker));
  return wf!;
}

async function until(pred: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await pred())) {
    assert.ok(Date.now() < deadline, `never: ${what}`);
    await sleep(100);
  }
}

const untilEnd = (id: string) =>
  world.waitFor(id, (r) => ['completed', 'failed', 'paused'].includes(r.status), 'an end', 150_000);

describe('acceptance snapshot', () => {
  test('issue requirement: hash taken at the start, changed issue told to the verifier, confirmed closes it', async () => {
    const tracker = new MemoryTracker();
    tracker.add(7, 'Make app.txt say fixed', 'app.txt must contain the word fixed.');
    const original = '#7 Make app.txt say fixed\n\napp.txt must contain the word fixed.';
    const pidFile = tmpFile('impl-pid');
    const log = tmpFile('issue-prompts');
    const wf = await createWith(
      stepScript({
        implementation: {
          pidFile,
          steps: [
            { call: 1 },
            { sleep: 800 },
            { write: { path: 'app.txt', content: 'fixed\n' } },
            { text: 'ok' },
          ],
        },
      }),
      '#7',
      log,
      tracker,
    );
    // A text requirement alongside: its snapshot is its text, unchanged.
    const textLog = tmpFile('text-prompts');
    const textWf = await createWith(stepScript(), 'Make app.txt say fixed, please', textLog);
    await world.start(wf.workflowId);
    await world.start(textWf.workflowId);
    await waitForFile(pidFile, 60_000);
    // The hash was stored when the workflow started, from the issue as it read then.
    assert.equal((await world.row(wf.workflowId)).acceptanceSnapshotHash, sha256(original));
    // Someone edits the issue while the agent works.
    tracker.issues.get(7)!.body = 'app.txt must contain the word fixed.\nAlso: keep a trailing newline.';
    const [row, textRow] = await Promise.all([untilEnd(wf.workflowId), untilEnd(textWf.workflowId)]);
    assert.equal(row.status, 'completed', `${row.error}`);
    assert.equal(row.verificationStatus, 'confirmed');
    assert.equal(row.acceptanceSnapshotHash, sha256(original), 'the start hash is kept');
    // The verifier read the issue as it is now, and was told it changed.
    const [verify] = logged(log, 'acceptance_verification');
    assert.ok(verify, 'the verifier ran');
    assert.match(verify!.prompt, /Acceptance snapshot \(the issue as it reads now/);
    assert.ok(verify!.prompt.includes('Also: keep a trailing newline.'));
    assert.match(verify!.prompt, /the issue changed since this workflow started/);
    const vm = (await world.milestones(wf.workflowId)).filter((m) => m.kind === 'acceptance_verification');
    assert.equal(vm.length, 1);
    assert.match(vm[0]!.title ?? '', /the issue changed since the workflow started/);
    // Confirmed: the issue is closed (the effect runs right after the state is written), once, with a
    // comment naming the workflow and its PR.
    await until(() => tracker.closes.length > 0, 'the issue closed');
    await sleep(500);
    assert.equal(tracker.closes.length, 1);
    assert.equal(tracker.closes[0]!.number, 7);
    assert.ok(tracker.closes[0]!.comment.includes(wf.workflowId));
    assert.match(tracker.closes[0]!.comment, /acceptance verification confirmed/);
    assert.match(tracker.closes[0]!.comment, /pull request #\d+/);
    assert.equal(tracker.issues.get(7)!.state, 'closed');

    assert.equal(textRow.status, 'completed', `${textRow.error}`);
    assert.equal(textRow.acceptanceSnapshotHash, sha256('Make app.txt say fixed, please'));
    const [textVerify] = logged(textLog, 'acceptance_verification');
    assert.match(
      textVerify!.prompt,
      /Acceptance snapshot \(the requirement; check the merged code against it\):\nMake app.txt say fixed, please/,
    );
    assert.ok(!textVerify!.prompt.includes('changed since'));
  });

  test('rejected: paused for manual review with the issue open; the override completes it and closes the issue', async () => {
    const tracker = new MemoryTracker();
    tracker.add(9, 'Make app.txt say fixed', 'app.txt must say fixed.');
    const wf = await createWith(
      stepScript({
        acceptance_verification: { steps: [{ call: 1 }, { text: 'Not met.\nVERDICT: rejected' }] },
      }),
      '#9',
      tmpFile('rejected-prompts'),
      tracker,
    );
    // A second one whose tracker cannot close: the verdict stands, the row says why.
    const failing = new MemoryTracker();
    failing.add(11, 'Make app.txt say fixed', 'app.txt must say fixed.');
    failing.failClose = true;
    const wf2 = await createWith(stepScript(), '#11', tmpFile('failclose-prompts'), failing);
    await world.start(wf.workflowId);
    await world.start(wf2.workflowId);
    const [paused, done] = await Promise.all([untilEnd(wf.workflowId), untilEnd(wf2.workflowId)]);
    assert.equal(paused.status, 'paused');
    assert.equal(paused.pausedBy, 'verification');
    assert.equal(paused.verificationStatus, 'rejected');
    assert.equal(tracker.closes.length, 0);
    assert.equal(tracker.issues.get(9)!.state, 'open');
    const client = await world.app.deps.temporal.client();
    const r = await client.workflow
      .getHandle(temporalWorkflowId(wf.workflowId))
      .executeUpdate(verificationOverrideUpdate, { args: [{ actor, note: 'met, checked by hand' }] });
    assert.equal(r.status, 'completed');
    assert.equal(tracker.closes.length, 1);
    assert.match(tracker.closes[0]!.comment, /reviewer-2 confirmed the acceptance verification by hand/);

    assert.equal(done.status, 'completed', `${done.error}`);
    assert.equal(done.verificationStatus, 'confirmed');
    await until(
      async () => /the issue could not be closed/.test((await world.row(wf2.workflowId)).error ?? ''),
      'the close failure recorded',
    );
    const after = await world.row(wf2.workflowId);
    assert.match(after.error ?? '', /the issue could not be closed: tracker answered 503/);
    assert.equal(after.status, 'completed');
    assert.equal(failing.issues.get(11)!.state, 'open');
  });
});
