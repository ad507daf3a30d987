// The alert preferences form (web/src/pages/alerts/preferences-form.ts): the API's view as form values
// and the requests a save needs: only changed fields in the PUT, the webhook kept, set or removed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  formOf,
  isDirty,
  type PreferencesView,
  savePlan,
} from '../../web/src/pages/alerts/preferences-form.ts';

const view: PreferencesView = {
  email_enabled: true,
  push_enabled: true,
  min_severity: 'warning',
  webhook_url: null,
  has_secret: false,
};

test('an untouched form needs no request', () => {
  const f = formOf(view);
  assert.equal(f.webhook_url, '');
  assert.deepEqual(savePlan(view, f), { preferences: null, webhook: { kind: 'keep' } });
  assert.equal(isDirty(view, f), false);
});

test('only the changed fields go into the PUT', () => {
  const plan = savePlan(view, { ...formOf(view), email_enabled: false, min_severity: 'critical' });
  assert.deepEqual(plan.preferences, { email_enabled: false, min_severity: 'critical' });
  assert.deepEqual(plan.webhook, { kind: 'keep' });
  // Changed and changed back: nothing to save.
  assert.equal(isDirty(view, { ...formOf(view), push_enabled: true }), false);
});

test('the webhook: a new URL is set (trimmed), an emptied one removed, the same one kept', () => {
  const withHook: PreferencesView = { ...view, webhook_url: 'https://h.example/x', has_secret: true };
  assert.deepEqual(savePlan(view, { ...formOf(view), webhook_url: '  https://h.example/x ' }).webhook, {
    kind: 'set',
    webhook_url: 'https://h.example/x',
  });
  assert.deepEqual(savePlan(withHook, { ...formOf(withHook), webhook_url: ' ' }).webhook, { kind: 'remove' });
  assert.deepEqual(savePlan(withHook, formOf(withHook)).webhook, { kind: 'keep' });
  assert.equal(isDirty(withHook, { ...formOf(withHook), webhook_url: '' }), true);
});

test('the same URL typed again with a signing secret is a change (the stored URL never shows it)', () => {
  const withHook: PreferencesView = { ...view, webhook_url: 'https://h.example/x', has_secret: false };
  const url = 'https://h.example/x?svc_robot_secret=abc';
  assert.deepEqual(savePlan(withHook, { ...formOf(withHook), webhook_url: url }).webhook, {
    kind: 'set',
    webhook_url: url,
  });
});
