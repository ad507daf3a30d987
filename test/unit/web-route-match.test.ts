// The client router's pure helpers: pattern matching for titles, and the once-per-path chunk reload.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { matchesPattern, routeFor, shouldReloadForChunk } from '../../web/src/route-match.ts';

test('patterns: params, wildcards, exact segments, query ignored', () => {
  assert.ok(matchesPattern('/autonomous/:id', '/autonomous/aw-1'));
  assert.ok(matchesPattern('/autonomous/:id/milestones/:mid', '/autonomous/aw-1/milestones/3'));
  assert.ok(!matchesPattern('/autonomous/:id', '/autonomous/aw-1/milestones/3'));
  assert.ok(!matchesPattern('/autonomous/:id', '/autonomous'));
  assert.ok(matchesPattern('/manage/*', '/manage/users/4'));
  assert.ok(matchesPattern('/messages', '/messages?q=x'));
  assert.ok(!matchesPattern('/messages', '/prompts'));
});

test('routeFor prefers the exact path, then the first matching pattern', () => {
  const rs = [
    { path: '/autonomous/:id', title: 'Workflow' },
    { path: '/autonomous/new', title: 'New' },
  ];
  assert.equal(routeFor(rs, '/autonomous/new')?.title, 'New');
  assert.equal(routeFor(rs, '/autonomous/aw-9')?.title, 'Workflow');
  assert.equal(routeFor(rs, '/nowhere'), undefined);
});

test('a failed chunk reloads once per path', () => {
  assert.ok(shouldReloadForChunk(null, '/alerts'));
  assert.ok(!shouldReloadForChunk('/alerts', '/alerts'));
  assert.ok(shouldReloadForChunk('/alerts', '/prompts'));
});
