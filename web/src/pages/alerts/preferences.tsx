// The caller's alert preferences on the alerts page (spec document 2, "Alerts": GET/PUT
// /api/alerts/preferences; the robot webhook through /api/alerts/preferences/webhook): email and push
// on or off, the lowest severity shown (it filters the list, the count and the stream too, so the
// page reloads after a change), and the webhook URL (its svc_robot_secret is stored encrypted and
// never shown back, only "a signing secret is stored"). Errors in words; "Saved" once the API agreed.
import { useState } from 'preact/hooks';
import { api } from '../../api/client.ts';
import { CheckField } from '../../ui/check-field.tsx';
import { Button, ErrorBox, Field, Loading } from '../../ui/index.ts';
import { SelectField } from '../../ui/select-field.tsx';
import { useLoad } from '../../ui/use-load.ts';
import {
  formOf,
  isDirty,
  MIN_SEVERITY_OPTIONS,
  type PreferencesForm,
  type PreferencesView,
  savePlan,
} from './preferences-form.ts';

const PATH = '/api/alerts/preferences';

export function AlertPreferences({ onSaved }: { onSaved: (view: PreferencesView) => void }) {
  const loaded = useLoad((signal) => api.get<PreferencesView>(PATH, { signal }), []);
  const [form, setForm] = useState<PreferencesForm | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);

  if (loaded.error != null && !loaded.data)
    return (
      <>
        <ErrorBox error={loaded.error} title="Preferences could not be loaded" />
        <Button onClick={loaded.reload}>Try again</Button>
      </>
    );
  if (!loaded.data) return <Loading label="Loading preferences…" />;
  const view = loaded.data;
  const f = form ?? formOf(view);
  const set =
    <K extends keyof PreferencesForm>(k: K) =>
    (v: PreferencesForm[K]) => {
      setSaved(false);
      setForm({ ...f, [k]: v });
    };

  const submit = async (e: Event) => {
    e.preventDefault();
    const plan = savePlan(view, f);
    setBusy(true);
    setError(null);
    setSaved(false);
    try {
      let next = view;
      if (plan.preferences) next = await api.put<PreferencesView>(PATH, plan.preferences);
      if (plan.webhook.kind === 'set')
        next = { ...next, ...(await api.put(`${PATH}/webhook`, { webhook_url: plan.webhook.webhook_url })) };
      else if (plan.webhook.kind === 'remove') next = { ...next, ...(await api.del(`${PATH}/webhook`)) };
      loaded.setData(() => next);
      setForm(formOf(next));
      setSaved(true);
      onSaved(next);
    } catch (err) {
      // What was saved before the failure is read again, so the form compares against the truth.
      setError(err);
      loaded.reload();
    } finally {
      setBusy(false);
    }
  };

  const dirty = isDirty(view, f);
  return (
    <form class="alert-preferences" onSubmit={submit} aria-label="Alert preferences">
      <CheckField label="Email me alerts" checked={f.email_enabled} onChecked={set('email_enabled')} />
      <CheckField
        label="Push alerts to my webhook"
        checked={f.push_enabled}
        onChecked={set('push_enabled')}
      />
      <SelectField
        label="Lowest severity to show"
        value={f.min_severity}
        options={MIN_SEVERITY_OPTIONS}
        onValue={(v) => set('min_severity')(v as PreferencesForm['min_severity'])}
        hint="Alerts below it are left out of the list, the unread count and the live stream."
      />
      <Field
        label="Webhook URL"
        type="url"
        value={f.webhook_url}
        onValue={set('webhook_url')}
        placeholder="https://chat.example.com/hooks/…"
        hint={`https only. Add ?svc_robot_secret=… to sign the pushes: the secret is stored encrypted and never shown again. Empty the field to remove the webhook.${
          view.has_secret ? ' A signing secret is stored.' : ''
        }`}
      />
      <ErrorBox error={error} title="Not saved" />
      <div class="pref-actions">
        <Button type="submit" variant="primary" busy={busy} disabled={!dirty}>
          Save preferences
        </Button>
        <span class="muted" role="status">
          {saved && !dirty ? 'Saved' : dirty ? 'Unsaved changes' : ''}
        </span>
      </div>
    </form>
  );
}
