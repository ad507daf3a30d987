// Git metadata integrity (domain/forge/integrity.ts + services/forge/integrity.ts): an untouched
// repository compares equal; an altered ref, config, added hook, mode change, replaced file (new
// inode, same content) or removed file is a violation that maps to exit 68 and the marker.
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import {
  assertUnchanged,
  compareSnapshots,
  REPO_INTEGRITY_EXIT_CODE,
  REPO_INTEGRITY_MARKER,
  RepositoryIntegrityViolationError,
} from '../../domain/forge/integrity.ts';
import { snapshotGitDir } from '../../services/forge/integrity.ts';
import { gitIn, makeGitRepo } from '../fixtures/git-repo.ts';

test('an untouched repository compares equal, even after read-only git commands', async () => {
  const repo = makeGitRepo({ 'a.txt': 'a\n', 'src/b.ts': 'export {};\n' });
  try {
    const gitDir = path.join(repo.path, '.git');
    const before = await snapshotGitDir(gitDir);
    assert.ok(before.size > 10);
    assert.equal(before.get('HEAD')?.type, 'file');
    assert.match(before.get('config')!.digest!, /^[0-9a-f]{64}$/);
    gitIn(repo.path, '--no-optional-locks', 'log', '--oneline');
    gitIn(repo.path, 'cat-file', '-p', 'HEAD');
    const after = await snapshotGitDir(gitDir);
    assert.deepEqual(compareSnapshots(before, after), []);
    assert.doesNotThrow(() => assertUnchanged(before, after));
  } finally {
    repo.cleanup();
  }
});

test('altered ref, config, added hook, mode change, replaced inode and removed file are all detected', async () => {
  const repo = makeGitRepo({ 'a.txt': 'a\n' });
  try {
    const gitDir = path.join(repo.path, '.git');
    const ref = path.join(gitDir, 'refs/heads/main');
    const before = await snapshotGitDir(gitDir);
    writeFileSync(ref, `${'0'.repeat(40)}\n`);
    writeFileSync(path.join(gitDir, 'config'), '[core]\n\tfsmonitor = evil\n', { flag: 'a' });
    writeFileSync(path.join(gitDir, 'hooks/pre-commit'), '#!/bin/sh\necho owned\n');
    chmodSync(path.join(gitDir, 'description'), 0o777);
    // same content, new inode
    copyFileSync(path.join(gitDir, 'HEAD'), path.join(gitDir, 'HEAD.tmp'));
    renameSync(path.join(gitDir, 'HEAD.tmp'), path.join(gitDir, 'HEAD'));
    rmSync(path.join(gitDir, 'info/exclude'));
    const after = await snapshotGitDir(gitDir);
    const v = compareSnapshots(before, after);
    const by = Object.fromEntries(v.map((x) => [x.path, x]));
    assert.deepEqual(by['refs/heads/main'], {
      path: 'refs/heads/main',
      change: 'changed',
      fields: ['digest'],
    });
    assert.deepEqual(by.config?.fields, ['digest']);
    assert.equal(by['hooks/pre-commit']?.change, 'added');
    assert.deepEqual(by.description?.fields, ['mode']);
    assert.deepEqual(by.HEAD?.fields, ['ino']);
    assert.equal(by['info/exclude']?.change, 'removed');
    const err = (() => {
      try {
        assertUnchanged(before, after);
      } catch (e) {
        return e;
      }
    })();
    assert.ok(err instanceof RepositoryIntegrityViolationError);
    assert.equal(err.exitCode, 68);
    assert.equal(REPO_INTEGRITY_EXIT_CODE, 68);
    assert.equal(err.marker, 'SVC_REPO_INTEGRITY_VIOLATION');
    assert.ok(err.message.startsWith(REPO_INTEGRITY_MARKER));
    assert.match(err.message, /manual inspection required/);
    assert.equal(err.violations.length, v.length);
  } finally {
    repo.cleanup();
  }
});

test('a symlink swapped in for a file is a type change; the walk never follows links', async () => {
  const repo = makeGitRepo({ 'a.txt': 'a\n' });
  try {
    const gitDir = path.join(repo.path, '.git');
    const before = await snapshotGitDir(gitDir);
    const desc = path.join(gitDir, 'description');
    rmSync(desc);
    const { symlinkSync } = await import('node:fs');
    symlinkSync('/etc', desc);
    const after = await snapshotGitDir(gitDir);
    const v = compareSnapshots(before, after).find((x) => x.path === 'description');
    assert.ok(v?.fields.includes('type'));
    assert.equal(after.get('description')?.digest, '/etc');
    assert.equal(after.has('description/passwd'), false);
  } finally {
    repo.cleanup();
  }
});

test('a directory past the entry bound is refused as a violation, not scanned forever', async () => {
  const repo = makeGitRepo({ 'a.txt': 'a\n' });
  try {
    await assert.rejects(
      snapshotGitDir(path.join(repo.path, '.git'), { maxEntries: 5 }),
      RepositoryIntegrityViolationError,
    );
  } finally {
    repo.cleanup();
  }
});

test('skip leaves a subtree out (a concurrent writer there is not a violation); the rest is still checked', async () => {
  const repo = makeGitRepo({ 'a.txt': 'a\n' });
  try {
    const gitDir = path.join(repo.path, '.git');
    const skip = (rel: string) => rel === 'objects' || rel === 'refs/heads';
    const before = await snapshotGitDir(gitDir, { skip });
    assert.equal(
      [...before.keys()].some((k) => k.startsWith('objects')),
      false,
    );
    repo.commit({ 'b.txt': 'b\n' }, 'moves refs/heads/main and adds objects');
    const after = await snapshotGitDir(gitDir, { skip });
    const changed = compareSnapshots(before, after).map((v) => v.path);
    assert.equal(
      changed.some((p) => p.startsWith('objects') || p.startsWith('refs/heads')),
      false,
    );
    // the commit also rewrote index and logs, which are not skipped
    assert.ok(changed.includes('index'));
  } finally {
    repo.cleanup();
  }
});
