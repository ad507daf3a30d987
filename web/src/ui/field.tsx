// Field: label + input + hint + error, wired with ids so the label and the error are announced.
import type { HTMLInputTypeAttribute } from 'preact';
import { FieldFrame, useFieldIds } from './field-frame.tsx';

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
  const { id, describedBy, invalid } = useFieldIds(hint, error);
  return (
    <FieldFrame id={id} label={label} hint={hint} error={error}>
      <input
        {...rest}
        id={id}
        type={type as 'text'}
        value={value}
        onInput={(e) => onValue(e.currentTarget.value)}
        aria-invalid={invalid}
        aria-describedby={describedBy}
      />
    </FieldFrame>
  );
}
