// /change-password: the forced password change (the API answers 403 "Password change required" to
// everything else until it is done) and the voluntary one (the header's "Change password" link, with
// ?next= the page it came from). One form for both: the password policy from GET /api/password-policy
// shown under the new password and checked before asking (auth/password-policy.ts), then POST
// /api/auth/change-password; the API's refusal in words. Forced: on to `next` once done. Voluntary:
// "Password changed" in place, with the way back (other sessions of the user were ended by the API).

import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, errorText, loginPathFor, safeNext } from '../api/client.ts';
import { Button, ErrorBox, Field } from '../ui/index.ts';
import { newPasswordProblem, type PasswordPolicy, policyHint } from './password-policy.ts';
import { useAuth } from './session.tsx';

export function ChangePasswordPage() {
  const { query, route } = useLocation();
  const { user, refresh } = useAuth();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [confirm, setConfirm] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState(false);
  const [policy, setPolicy] = useState<PasswordPolicy | null>(null);
  const back = safeNext(query.next);
  // Signed out: sign in first, then come back here.
  useEffect(() => {
    if (user === null) route(loginPathFor('/change-password'), true);
  }, [user, route]);
  const signedIn = !!user;
  useEffect(() => {
    if (!signedIn) return;
    // Without the policy the form still works: the API checks and answers in words.
    api
      .get<PasswordPolicy>('/api/password-policy')
      .then(setPolicy)
      .catch(() => setPolicy(null));
  }, [signedIn]);

  const forced = !!user?.must_change_password;

  const submit = async (e: Event) => {
    e.preventDefault();
    const problem = newPasswordProblem(policy, user?.username ?? '', current, next, confirm);
    if (problem) {
      setError(problem);
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await api.post('/api/auth/change-password', { current_password: current, new_password: next });
      await refresh();
      if (forced) {
        route(back);
        return;
      }
      setCurrent('');
      setNext('');
      setConfirm('');
      setDone(true);
    } catch (err) {
      setError(errorText(err));
    }
    setBusy(false);
  };

  return (
    <main id="main" class="auth-page">
      <form class="auth-card" onSubmit={submit} aria-labelledby="pw-title">
        <h1 id="pw-title">Change your password</h1>
        {forced && (
          <p class="notice" role="status">
            You must choose a new password before you continue.
          </p>
        )}
        {done && (
          <p class="notice" role="status">
            Password changed. Your other sessions were signed out. <a href={back}>Back to the app</a>
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
          hint={policy ? policyHint(policy) : undefined}
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
        {!forced && !done && (
          <p>
            <a href={back}>Cancel</a>
          </p>
        )}
      </form>
    </main>
  );
}
