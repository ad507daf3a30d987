// /manage/security: the global security settings (GET/PUT /api/security-settings): login lockout,
// password minimum length, linking a first SSO login by email. Only changed values are sent; other
// instances pick a change up within the API's cache time, shown on the page.
import { useState } from 'preact/hooks';
import { api } from '../../api/client.ts';
import { CheckField } from '../../ui/check-field.tsx';
import { Button, ErrorBox, Field, Loading } from '../../ui/index.ts';
import { useSubmit } from '../../ui/use-submit.ts';
import { changedOnly, readIntFields } from './form-values.ts';
import { Done, ManagePage } from './layout.tsx';
import { useResource } from './use-resource.ts';

interface Settings {
  login_max_attempts: number;
  login_lockout_minutes: number;
  password_min_length: number;
  sso_link_existing_by_email: boolean;
}
interface View {
  settings: Settings;
  descriptions: Record<string, string>;
  cache_seconds: number;
}
const NUMBERS = [
  ['login_max_attempts', 'Failed logins before lockout', 1, 100],
  ['login_lockout_minutes', 'Lockout (minutes)', 1, 1440],
  ['password_min_length', 'Minimum password length', 8, 128],
] as const;
type NumKey = (typeof NUMBERS)[number][0];

function SettingsForm({ view, onSaved }: { view: View; onSaved: (v: View) => void }) {
  const s = view.settings;
  const [fields, setFields] = useState<Record<NumKey, string>>({
    login_max_attempts: String(s.login_max_attempts),
    login_lockout_minutes: String(s.login_lockout_minutes),
    password_min_length: String(s.password_min_length),
  });
  const [link, setLink] = useState(s.sso_link_existing_by_email);
  const [errors, setErrors] = useState<Partial<Record<NumKey, string>>>({});
  const { busy, error, submit } = useSubmit(async () => {
    const next: Partial<Record<NumKey, string>> = {};
    for (const [k, , min, max] of NUMBERS) {
      const p = readIntFields({ [k]: fields[k] }, { min, max });
      if (p.errors[k]) next[k] = p.errors[k];
      else if (p.values[k] == null) next[k] = 'is required';
    }
    setErrors(next);
    if (Object.keys(next).length) return;
    const wanted: Settings = {
      login_max_attempts: Number(fields.login_max_attempts),
      login_lockout_minutes: Number(fields.login_lockout_minutes),
      password_min_length: Number(fields.password_min_length),
      sso_link_existing_by_email: link,
    };
    const diff = changedOnly(s, wanted);
    if (!Object.keys(diff).length) throw new Error('Nothing changed');
    onSaved(await api.put<View>('/api/security-settings', diff));
  });
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="sec-h" noValidate>
      <h2 id="sec-h">Login and passwords</h2>
      <ErrorBox error={error} />
      <div class="form-grid">
        {NUMBERS.map(([key, label, min, max]) => (
          <Field
            key={key}
            label={label}
            type="number"
            min={min}
            max={max}
            value={fields[key]}
            onValue={(v) => setFields({ ...fields, [key]: v })}
            error={errors[key]}
            hint={view.descriptions[key]}
          />
        ))}
      </div>
      <CheckField
        label="Link a first SSO login to the local user with the same verified email"
        checked={link}
        onChecked={setLink}
      />
      <Button type="submit" variant="primary" busy={busy}>
        Save settings
      </Button>
    </form>
  );
}

export default function SecurityPage() {
  const view = useResource((signal) => api.get<View>('/api/security-settings', { signal }));
  const [saved, setSaved] = useState<View | null>(null);
  const current = saved ?? view.data;
  return (
    <ManagePage title="Security settings">
      <Done message={saved ? 'Security settings saved' : null} />
      <ErrorBox error={view.error} />
      {!current ? (
        view.error ? null : (
          <Loading />
        )
      ) : (
        <>
          <p class="muted">Other server instances apply a change within {current.cache_seconds} seconds.</p>
          <SettingsForm key={JSON.stringify(current.settings)} view={current} onSaved={setSaved} />
        </>
      )}
    </ManagePage>
  );
}
