// TextareaField: label + <textarea> + hint + error, wired like Field.
import { useId } from 'preact/hooks';

export function TextareaField(props: {
  label: string;
  value: string;
  onValue: (v: string) => void;
  rows?: number;
  error?: string | null;
  hint?: string;
  name?: string;
  required?: boolean;
  readOnly?: boolean;
}) {
  const id = useId();
  const { label, value, onValue, rows = 6, error, hint, ...rest } = props;
  const describedBy = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <textarea
        {...rest}
        id={id}
        rows={rows}
        value={value}
        onInput={(e) => onValue(e.currentTarget.value)}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={describedBy || undefined}
      />
      {hint && (
        <div class="field-hint" id={`${id}-hint`}>
          {hint}
        </div>
      )}
      {error && (
        <div class="field-error" id={`${id}-error`}>
          {error}
        </div>
      )}
    </div>
  );
}
