// The agent ships alone, so it keeps its own copy of the model-name rule; the two must never drift.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MODEL_PATTERN as AGENT_PATTERN } from '../../agent/work-roots.ts';
import { MODEL_PATTERN as SERVER_PATTERN } from '../../domain/remote-session-input.ts';

test('the agent and the server accept exactly the same model names', () => {
  assert.equal(AGENT_PATTERN.source, SERVER_PATTERN.source);
  assert.equal(AGENT_PATTERN.flags, SERVER_PATTERN.flags);
});
