// Loading, ErrorBox and ProgressBar: status pieces announced to screen readers.
import { errorText } from '../api/client.ts';
import { usedPercent } from './format.ts';

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

/**
 * A native <progress> with a visible label. The bar stops at full, but the figure is the real
 * percentage ("156%") and a bar past its limit takes the over-limit style and says so in words.
 */
export function ProgressBar({ value, max = 100, label }: { value: number; max?: number; label: string }) {
  const pct = usedPercent(value, max);
  const over = max > 0 && value > max;
  return (
    <div class={over ? 'progress over-limit' : 'progress'}>
      <span class="progress-label">
        {label} <span class="progress-value">{pct}%</span>
        {over && <span class="progress-over"> over the limit</span>}
      </span>
      <progress value={Math.min(Math.max(0, value), max)} max={max} aria-label={label} />
    </div>
  );
}
