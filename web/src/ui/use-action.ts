// useAction: the act-then-refresh shape of list pages (delete a row, disable, suspend...). `act(what,
// msg)` clears the last error, runs `what`, then hands `msg` to `onDone` (say it, reload the list);
// without `msg`, `what` does its own follow-up and `onDone` is not called. What `what` throws is kept
// as `error` for an ErrorBox (and `onDone` is not called). The latest `onDone` is the one called.
import { useCallback, useRef, useState } from 'preact/hooks';

export function useAction(onDone?: (msg: string) => unknown) {
  const [error, setError] = useState<unknown>(null);
  const doneRef = useRef(onDone);
  doneRef.current = onDone;
  const act = useCallback(async (what: () => Promise<unknown>, msg?: string) => {
    setError(null);
    try {
      await what();
    } catch (err) {
      setError(err);
      return;
    }
    if (msg !== undefined) await doneRef.current?.(msg);
  }, []);
  return { act, error, setError };
}
