// Field: label + input + hint + error, wired with ids so the label and the error are announced.
import type { HTMLInputTypeAttribute } from 'preact';
import { useId } from 'preact/hooks';

interface Props {
  label: string;
  value: string;
  onValue: (v: string) => void;
  error?: string | null;
  hint?: string;
  type?: HTMLInputTypeAttribute;
  name?: string;
  required?: boolean;
  disabled?: boolean;
  placeholder?: string;
  autoComplete?: string;
  autoFocus?: boolean;
  min?: number | string;
  max?: number | string;
  step?: number | string;
}

export function Field({ label, value, onValue, error, hint, type = 'text', ...rest }: Props) {
  const id = useId();
  const describedBy = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        {...rest}
        id={id}
        type={type as 'text'}
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
