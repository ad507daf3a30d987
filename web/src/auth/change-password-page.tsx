// /change-password: the forced password change (the API answers 403 "Password change required" to
// everything else until it is done) and the voluntary one. POST /api/auth/change-password.

import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, errorText, loginPathFor, safeNext } from '../api/client.ts';
import { Button, ErrorBox, Field } from '../ui/index.ts';
import { useAuth } from './session.tsx';

export function ChangePasswordPage() {
  const { query, route } = useLocation();
  const { user, refresh } = useAuth();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [confirm, setConfirm] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // Signed out: sign in first, then come back here.
  useEffect(() => {
    if (user === null) route(loginPathFor('/change-password'), true);
  }, [user, route]);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (next !== confirm) {
      setError('The new passwords do not match');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await api.post('/api/auth/change-password', { current_password: current, new_password: next });
      await refresh();
      route(safeNext(query.next));
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  };

  return (
    <main id="main" class="auth-page">
      <form class="auth-card" onSubmit={submit} aria-labelledby="pw-title">
        <h1 id="pw-title">Change your password</h1>
        {user?.must_change_password && (
          <p class="notice" role="status">
            You must choose a new password before you continue.
          </p>
        )}
        <ErrorBox error={error} />
        <Field
          label="Current password"
          name="current_password"
          type="password"
          value={current}
          onValue={setCurrent}
          autoComplete="current-password"
          required
        />
        <Field
          label="New password"
          name="new_password"
          type="password"
          value={next}
          onValue={setNext}
          autoComplete="new-password"
          required
        />
        <Field
          label="Repeat the new password"
          name="confirm_password"
          type="password"
          value={confirm}
          onValue={setConfirm}
          autoComplete="new-password"
          required
        />
        <Button type="submit" variant="primary" busy={busy}>
          Change password
        </Button>
      </form>
    </main>
  );
}
