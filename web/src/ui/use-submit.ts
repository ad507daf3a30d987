// useSubmit: the busy / error / submit shape every form repeats. `submit` (a form's onSubmit, or a
// button's onClick) stops the browser's own submit, marks busy, clears the last error, runs the
// action and keeps what it threw as `error` (for ErrorBox: the API's words). The latest `run` is the
// one called, so it may read the form's current state without being memoised.
import { useCallback, useRef, useState } from 'preact/hooks';

export interface Submit {
  busy: boolean;
  error: unknown;
  setError: (err: unknown) => void;
  submit: (e?: Event) => Promise<void>;
}

export function useSubmit(run: () => Promise<void>): Submit {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const runRef = useRef(run);
  runRef.current = run;
  const submit = useCallback(async (e?: Event) => {
    e?.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await runRef.current();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, setError, submit };
}
