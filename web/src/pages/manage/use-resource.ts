// Loads one API resource for a page: {data, error, loading, reload}. A newer load wins over an older
// one still in flight (aborted), and nothing is set after the page unmounts.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export function useResource<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[] = []) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const current = useRef<AbortController | null>(null);

  const reload = useCallback(async () => {
    current.current?.abort();
    const ctl = new AbortController();
    current.current = ctl;
    setLoading(true);
    try {
      const value = await load(ctl.signal);
      if (ctl.signal.aborted) return;
      setData(value);
      setError(null);
    } catch (err) {
      if (ctl.signal.aborted || (err as Error).name === 'AbortError') return;
      setError(err);
    } finally {
      if (!ctl.signal.aborted) setLoading(false);
    }
    // The caller names the dependencies (like useEffect).
  }, deps);

  useEffect(() => {
    void reload();
    return () => current.current?.abort();
  }, [reload]);

  return { data, error, loading, reload };
}
