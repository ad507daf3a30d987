// useLoad: one API read tied to a component's life. Runs `load` on mount and whenever `deps` change,
// aborts the previous read (its late answer is dropped), and gives {data, error, loading, reload}.
// `data` keeps the last good answer while a reload runs, so lists do not blink.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
  /** Replace the data locally (after a change the page made itself). */
  setData: (fn: (prev: T | undefined) => T | undefined) => void;
}

export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setDataState] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  useEffect(() => {
    const ctl = new AbortController();
    setLoading(true);
    setError(null);
    loadRef.current(ctl.signal).then(
      (d) => {
        if (ctl.signal.aborted) return;
        setDataState(d);
        setLoading(false);
      },
      (err) => {
        if (ctl.signal.aborted) return;
        setError(err);
        setLoading(false);
      },
    );
    return () => ctl.abort();
  }, [...deps, tick]);

  const reload = useCallback(() => setTick((t) => t + 1), []);
  const setData = useCallback((fn: (prev: T | undefined) => T | undefined) => setDataState(fn), []);
  return { data, error, loading, reload, setData };
}
