// Forge failures mapped to autonomous error classes (domain/forge/error-class.ts), by type, never by
// message text.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyForgeError } from '../../domain/forge/error-class.ts';
import {
  ChangedFilesLimitError,
  ForgePathError,
  GitCommandError,
  GitOutputTooLargeError,
  GitTimeoutError,
  InvalidBranchNameError,
  NotARepositoryError,
  ProjectRepositoryError,
  PullRequestNotFoundError,
  PullRequestStateError,
} from '../../domain/forge/errors.ts';
import { RepositoryIntegrityViolationError } from '../../domain/forge/integrity.ts';

test('git timeouts and failures are transient Git errors; an integrity violation fails closed', () => {
  for (const e of [new GitTimeoutError(['fetch'], 10), new GitCommandError(['merge'], 1, 'boom')])
    assert.deepEqual(classifyForgeError(e), {
      kind: 'class',
      error: { class: 'transient_network', source: 'git' },
    });
  assert.deepEqual(
    classifyForgeError(
      new RepositoryIntegrityViolationError([{ path: 'config', change: 'changed', fields: ['digest'] }]),
    ),
    {
      kind: 'class',
      error: { class: 'repo_integrity_violation' },
    },
  );
});

test('the changed-files limit is its own outcome; input and state errors fail visibly with their code', () => {
  const limit = classifyForgeError(new ChangedFilesLimitError(61, 60));
  assert.equal(limit?.kind, 'changed_files_limit');
  assert.match(limit?.kind === 'changed_files_limit' ? limit.message : '', /61 files.*at most 60/);
  const visible: [Error, string][] = [
    [new GitOutputTooLargeError(['diff'], 1), 'git_output_too_large'],
    [new NotARepositoryError('/x'), 'not_a_repository'],
    [new InvalidBranchNameError('bad'), 'invalid_branch_name'],
    [new ForgePathError('outside'), 'invalid_path'],
    [new PullRequestNotFoundError('local:1', 3), 'pull_request_not_found'],
    [new PullRequestStateError('merged'), 'pull_request_state'],
    [new ProjectRepositoryError('empty'), 'project_repository'],
  ];
  for (const [e, code] of visible) {
    const f = classifyForgeError(e);
    assert.equal(f?.kind, 'visible', code);
    assert.equal(f?.kind === 'visible' && f.code, code);
  }
  // a message that merely mentions a timeout is not a forge error
  assert.equal(classifyForgeError(new Error('git fetch timed out')), null);
});
