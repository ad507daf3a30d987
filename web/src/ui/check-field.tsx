// CheckField: a checkbox with its label wired by id (and an optional hint), styled like Field.
import { useId } from 'preact/hooks';

export function CheckField(props: {
  label: string;
  checked: boolean;
  onChecked: (v: boolean) => void;
  hint?: string;
  disabled?: boolean;
  name?: string;
}) {
  const id = useId();
  return (
    <div class="check">
      <input
        id={id}
        type="checkbox"
        name={props.name}
        checked={props.checked}
        disabled={props.disabled}
        aria-describedby={props.hint ? `${id}-hint` : undefined}
        onChange={(e) => props.onChecked(e.currentTarget.checked)}
      />
      <label for={id}>{props.label}</label>
      {props.hint && (
        <div class="field-hint" id={`${id}-hint`}>
          {props.hint}
        </div>
      )}
    </div>
  );
}
