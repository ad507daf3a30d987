// The alert preferences form, pure (test/unit/web-alert-preferences.test.ts): the API's view of the
// caller's preferences (GET /api/alerts/preferences: email_enabled, push_enabled, min_severity, plus
// the robot webhook's URL without its secret and has_secret) turned into form values, and the form
// turned back into the requests that save it: PUT /api/alerts/preferences with the fields that
// changed, and for the webhook PUT /api/alerts/preferences/webhook (a new URL) or DELETE (emptied).
import type { Severity } from './alert-list.ts';

export interface PreferencesView {
  email_enabled: boolean;
  push_enabled: boolean;
  min_severity: Severity;
  webhook_url: string | null;
  has_secret: boolean;
}

export interface PreferencesForm {
  email_enabled: boolean;
  push_enabled: boolean;
  min_severity: Severity;
  webhook_url: string;
}

export type PreferencesBody = Partial<
  Pick<PreferencesForm, 'email_enabled' | 'push_enabled' | 'min_severity'>
>;

export type WebhookChange = { kind: 'keep' } | { kind: 'set'; webhook_url: string } | { kind: 'remove' };

export interface SavePlan {
  /** null: nothing of the three changed, no PUT needed. */
  preferences: PreferencesBody | null;
  webhook: WebhookChange;
}

export const MIN_SEVERITY_OPTIONS: { value: Severity; label: string }[] = [
  { value: 'info', label: 'Info and above (everything)' },
  { value: 'warning', label: 'Warning and above' },
  { value: 'critical', label: 'Critical only' },
];

export const formOf = (v: PreferencesView): PreferencesForm => ({
  email_enabled: v.email_enabled,
  push_enabled: v.push_enabled,
  min_severity: v.min_severity,
  webhook_url: v.webhook_url ?? '',
});

export function savePlan(saved: PreferencesView, form: PreferencesForm): SavePlan {
  const body: PreferencesBody = {};
  if (form.email_enabled !== saved.email_enabled) body.email_enabled = form.email_enabled;
  if (form.push_enabled !== saved.push_enabled) body.push_enabled = form.push_enabled;
  if (form.min_severity !== saved.min_severity) body.min_severity = form.min_severity;
  const url = form.webhook_url.trim();
  const before = saved.webhook_url ?? '';
  // A URL typed again with a secret in it is a change even when the stored (secret-less) URL is equal.
  const webhook: WebhookChange =
    url === before && !url.includes('svc_robot_secret')
      ? { kind: 'keep' }
      : url === ''
        ? { kind: 'remove' }
        : { kind: 'set', webhook_url: url };
  return { preferences: Object.keys(body).length ? body : null, webhook };
}

export const isDirty = (saved: PreferencesView, form: PreferencesForm) => {
  const p = savePlan(saved, form);
  return p.preferences !== null || p.webhook.kind !== 'keep';
};
