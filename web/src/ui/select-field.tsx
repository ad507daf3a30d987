// SelectField: label + native <select> (keyboard and screen readers for free) + hint + error, wired
// by ids like Field. The one select of the app (the manage and autonomous pages had their own).
import { FieldFrame, useFieldIds } from './field-frame.tsx';

export interface Option {
  value: string;
  label: string;
}

export function SelectField(props: {
  label: string;
  value: string;
  options: readonly Option[];
  onValue: (v: string) => void;
  hint?: string;
  error?: string | null;
  name?: string;
  required?: boolean;
  disabled?: boolean;
}) {
  const { label, value, options, onValue, hint, error, ...rest } = props;
  const { id, describedBy, invalid } = useFieldIds(hint, error);
  return (
    <FieldFrame id={id} label={label} hint={hint} error={error}>
      <select
        {...rest}
        id={id}
        value={value}
        aria-invalid={invalid}
        aria-describedby={describedBy}
        onChange={(e) => onValue(e.currentTarget.value)}
      >
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </FieldFrame>
  );
}
