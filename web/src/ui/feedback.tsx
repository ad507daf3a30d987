// Loading, ErrorBox and ProgressBar: status pieces announced to screen readers.
import { errorText } from '../api/client.ts';

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p class="loading" role="status" aria-live="polite">
      {label}
    </p>
  );
}

/** An error in words (ApiError carries the API's `{error}` text). Renders nothing without an error. */
export function ErrorBox({ error, title }: { error: unknown; title?: string }) {
  if (error == null || error === '') return null;
  return (
    <div class="error-box" role="alert">
      {title && <strong>{title}: </strong>}
      {typeof error === 'string' ? error : errorText(error)}
    </div>
  );
}

/** A native <progress> with a visible label; value and max are plain numbers. */
export function ProgressBar({ value, max = 100, label }: { value: number; max?: number; label: string }) {
  const pct = max > 0 ? Math.min(100, Math.max(0, (value / max) * 100)) : 0;
  return (
    <div class="progress">
      <span class="progress-label">
        {label} <span class="progress-value">{Math.round(pct)}%</span>
      </span>
      <progress value={Math.min(value, max)} max={max} aria-label={label} />
    </div>
  );
}
