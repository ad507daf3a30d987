// SelectField: label + native <select> (keyboard and screen readers for free), styled like Field.
import { useId } from 'preact/hooks';

export interface Option {
  value: string;
  label: string;
}

export function SelectField(props: {
  label: string;
  value: string;
  options: Option[];
  onValue: (v: string) => void;
  name?: string;
  disabled?: boolean;
}) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select
        id={id}
        name={props.name}
        value={props.value}
        disabled={props.disabled}
        onChange={(e) => props.onValue(e.currentTarget.value)}
      >
        {props.options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );
}
