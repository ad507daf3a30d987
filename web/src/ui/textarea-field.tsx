// TextareaField: label + <textarea> + hint + error, wired like Field. The one textarea of the app.
import { FieldFrame, useFieldIds } from './field-frame.tsx';

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
  maxLength?: number;
}) {
  const { label, value, onValue, rows = 6, error, hint, ...rest } = props;
  const { id, describedBy, invalid } = useFieldIds(hint, error);
  return (
    <FieldFrame id={id} label={label} hint={hint} error={error}>
      <textarea
        {...rest}
        id={id}
        rows={rows}
        value={value}
        onInput={(e) => onValue(e.currentTarget.value)}
        aria-invalid={invalid}
        aria-describedby={describedBy}
      />
    </FieldFrame>
  );
}
