// services/forge/ref-files.ts against what git itself answers, on a real bare repository: loose and
// packed refs, a loose ref written over a packed one, a missing ref, and the cases left to git
// (a symbolic ref, a file that holds no object id or more than a ref line, a `refs/heads` that is not a
// directory, a FIFO); and the
// branch HEAD names, as `git symbolic-ref --short HEAD` prints it, or git's turn when HEAD is detached.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { readHeadBranch, readRefFile } from '../../services/forge/ref-files.ts';

let root: string;
let gitDir: string;
const git = (...args: string[]) =>
  execFileSync('git', args, {
    env: {
      ...process.env,
      GIT_DIR: gitDir,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@example.com',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@example.com',
    },
    encoding: 'utf8',
  }).trim();
const revParse = (ref: string) => git('rev-parse', '--verify', ref);

let first: string;
let second: string;

before(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'ref-files-'));
  gitDir = path.join(root, 'repo.git');
  execFileSync('git', ['init', '-q', '--bare', '-b', 'main', gitDir]);
  const tree = git('mktree', '--missing');
  first = git('commit-tree', tree, '-m', 'first');
  second = git('commit-tree', tree, '-p', first, '-m', 'second');
  git('update-ref', 'refs/heads/main', first);
  git('update-ref', 'refs/heads/feature/a', second);
});
after(() => rmSync(root, { recursive: true, force: true }));

test('a loose ref is read as git reads it', () => {
  assert.equal(readRefFile(gitDir, 'refs/heads/main'), revParse('refs/heads/main'));
  assert.equal(readRefFile(gitDir, 'refs/heads/feature/a'), second);
});

test('a missing ref is null, with or without packed-refs', () => {
  assert.equal(readRefFile(gitDir, 'refs/heads/nothing'), null);
  git('pack-refs', '--all');
  assert.equal(readRefFile(gitDir, 'refs/heads/nothing'), null);
});

test('a packed ref is found in packed-refs; a loose ref written later wins over it', () => {
  git('pack-refs', '--all');
  assert.equal(readRefFile(gitDir, 'refs/heads/main'), first);
  assert.equal(readRefFile(gitDir, 'refs/heads/feature/a'), second);
  git('update-ref', 'refs/heads/main', second);
  assert.equal(readRefFile(gitDir, 'refs/heads/main'), second);
  assert.equal(revParse('refs/heads/main'), second);
});

test('what only git can say is left to it', () => {
  git('symbolic-ref', 'refs/heads/alias', 'refs/heads/main');
  assert.equal(readRefFile(gitDir, 'refs/heads/alias'), undefined, 'a symbolic ref');
  writeFileSync(path.join(gitDir, 'refs/heads/garbage'), 'not an id\n');
  assert.equal(readRefFile(gitDir, 'refs/heads/garbage'), undefined, 'a file without an object id');
  assert.equal(readRefFile(gitDir, 'refs/heads/main/below'), undefined, 'a ref below a ref file');
  writeFileSync(path.join(gitDir, 'refs/heads/long'), `${first}\n${'x'.repeat(4096)}`);
  assert.equal(readRefFile(gitDir, 'refs/heads/long'), undefined, 'a file longer than a ref line');
});

test('a FIFO in place of a ref is refused at once, never read (it would hold the thread)', () => {
  execFileSync('mkfifo', [path.join(gitDir, 'refs/heads/fifo')]);
  assert.equal(readRefFile(gitDir, 'refs/heads/fifo'), undefined);
});

test('the branch HEAD names, as git prints it; a detached HEAD is left to git', () => {
  assert.equal(readHeadBranch(gitDir), git('symbolic-ref', '--short', 'HEAD'));
  git('symbolic-ref', 'HEAD', 'refs/heads/feature/a');
  assert.equal(readHeadBranch(gitDir), 'feature/a');
  git('update-ref', '--no-deref', 'HEAD', first);
  assert.equal(readHeadBranch(gitDir), undefined);
  assert.equal(readHeadBranch(path.join(root, 'no-such.git')), undefined);
});
