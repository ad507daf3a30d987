// The one rule for "Temporal cannot serve this call now" (services/temporal-unavailable.ts): it sees
// the gRPC status however deeply the Temporal client nested it, and nothing else.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Metadata } from '@grpc/grpc-js';
import {
  ServiceError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
} from '@temporalio/client';
import { ApplicationFailure, NamespaceNotFoundError, WorkflowNotFoundError } from '@temporalio/common';
import { ConflictError, ServiceUnavailableError } from '../../domain/errors.ts';
import {
  BACKGROUND_UNAVAILABLE,
  rethrowIfTemporalUnavailable,
  temporalUnavailability,
} from '../../services/temporal-unavailable.ts';

/** An error as grpc-js gives it (what the Temporal client puts in `cause`). */
const grpcError = (code: number, name: string, details: string) =>
  Object.assign(new Error(`${code} ${name}: ${details}`), { code, details, metadata: new Metadata() });

test('gRPC UNAVAILABLE, DEADLINE_EXCEEDED and RESOURCE_EXHAUSTED at any depth of the cause chain', () => {
  const unavailable = grpcError(14, 'UNAVAILABLE', 'No connection established');
  const cases: unknown[] = [
    unavailable,
    new ServiceError('Workflow Update failed', { cause: unavailable }),
    new ServiceError('Update-With-Start failed', {
      cause: new ServiceError('Unexpected error while making gRPC request', { cause: unavailable }),
    }),
    new WorkflowUpdateFailedError('Workflow Update failed', unavailable),
    new WorkflowUpdateRPCTimeoutOrCancelledError('timeout', {
      cause: grpcError(4, 'DEADLINE_EXCEEDED', 'Deadline exceeded'),
    }),
    new ServiceError('Failed to start Workflow', { cause: grpcError(8, 'RESOURCE_EXHAUSTED', 'rate limit') }),
  ];
  for (const err of cases) assert.equal(temporalUnavailability(err)?.kind, 'unreachable', String(err));
});

test('the same causes without a code: the status line, socket errors, the first connection', () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:7233'), { code: 'ECONNREFUSED' });
  for (const err of [
    new Error('14 UNAVAILABLE: Connection dropped'),
    refused,
    new ServiceError('Failed to start Workflow', { cause: refused }),
    new Error('Failed to connect before the deadline'),
    new ServiceError('Failed to connect to Temporal server', { cause: new Error('x') }),
  ])
    assert.equal(temporalUnavailability(err)?.kind, 'unreachable', String(err));
});

test('a missing namespace, also when the client turned it into a WorkflowNotFoundError', () => {
  const notFound = grpcError(5, 'NOT_FOUND', 'Namespace missing-ns is not found.');
  for (const err of [
    notFound,
    new ServiceError('Workflow Update failed', { cause: notFound }),
    new WorkflowNotFoundError('Namespace missing-ns is not found.', 'wf-1', undefined),
  ])
    assert.deepEqual(temporalUnavailability(err), {
      kind: 'namespace_missing',
      detail: 'Namespace missing-ns is not found.',
    });
  const typed = new ServiceError('Failed to start Workflow', {
    cause: new NamespaceNotFoundError('missing-ns'),
  });
  assert.equal(temporalUnavailability(typed)?.kind, 'namespace_missing');
});

test('everything else is not unavailability and is rethrown by its caller as before', () => {
  const refused = ApplicationFailure.create({ type: 'INVALID_TRANSITION', message: 'already paused' });
  for (const err of [
    new WorkflowUpdateFailedError('Workflow Update failed', refused),
    new WorkflowNotFoundError('Workflow not found', 'wf-1', undefined),
    grpcError(6, 'ALREADY_EXISTS', 'Workflow execution already started'),
    new Error('boom'),
    new ConflictError('The session is no longer running'),
    undefined,
    'a string',
  ]) {
    assert.equal(temporalUnavailability(err), undefined, String(err));
    assert.doesNotThrow(() => rethrowIfTemporalUnavailable(err));
  }
});

test('a cyclic cause chain ends', () => {
  const a = new Error('a') as Error & { cause?: unknown };
  a.cause = new Error('b', { cause: a });
  assert.equal(temporalUnavailability(a), undefined);
});

test('the answer is 503 with Retry-After and the background text', () => {
  assert.throws(
    () => rethrowIfTemporalUnavailable(new Error('14 UNAVAILABLE: x')),
    (err: unknown) =>
      err instanceof ServiceUnavailableError &&
      err.status === 503 &&
      err.message === BACKGROUND_UNAVAILABLE &&
      (err.retryAfterSeconds ?? 0) > 0,
  );
});
