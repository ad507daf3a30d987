// Form controls the UI kit does not have yet, built like its Field (label wired by id, hint, error):
// a select, a checkbox, a textarea, and a button that asks for confirmation in place before a
// destructive action (keyboard reachable, no browser dialog).
import type { ComponentChildren } from 'preact';
import { useId, useState } from 'preact/hooks';
import { Button } from '../../ui/index.ts';

export function SelectField(props: {
  label: string;
  value: string;
  onValue: (v: string) => void;
  options: { value: string; label: string }[];
  hint?: string;
  required?: boolean;
  disabled?: boolean;
}) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select
        id={id}
        value={props.value}
        required={props.required}
        disabled={props.disabled}
        aria-describedby={props.hint ? `${id}-hint` : undefined}
        onChange={(e) => props.onValue(e.currentTarget.value)}
      >
        {props.options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      {props.hint && (
        <div class="field-hint" id={`${id}-hint`}>
          {props.hint}
        </div>
      )}
    </div>
  );
}

export function CheckField(props: { label: string; checked: boolean; onChecked: (v: boolean) => void }) {
  const id = useId();
  return (
    <div class="check">
      <input
        id={id}
        type="checkbox"
        checked={props.checked}
        onChange={(e) => props.onChecked(e.currentTarget.checked)}
      />
      <label for={id}>{props.label}</label>
    </div>
  );
}

export function TextAreaField(props: {
  label: string;
  value: string;
  onValue: (v: string) => void;
  hint?: string;
  required?: boolean;
}) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <textarea
        id={id}
        value={props.value}
        required={props.required}
        aria-describedby={props.hint ? `${id}-hint` : undefined}
        onInput={(e) => props.onValue(e.currentTarget.value)}
      />
      {props.hint && (
        <div class="field-hint" id={`${id}-hint`}>
          {props.hint}
        </div>
      )}
    </div>
  );
}

/**
 * A destructive action in two steps: the first press shows "<question> Confirm / Cancel" in place;
 * Confirm runs the action. `label` names the action for screen readers (e.g. "Delete alice").
 */
export function ConfirmButton(props: {
  children: ComponentChildren;
  label: string;
  question: string;
  onConfirm: () => Promise<void> | void;
  confirmText?: string;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  if (!asking)
    return (
      <Button variant="secondary" aria-label={props.label} onClick={() => setAsking(true)}>
        {props.children}
      </Button>
    );
  return (
    <span class="confirm">
      <span>{props.question}</span>
      <Button
        variant="danger"
        busy={busy}
        autoFocus
        onClick={async () => {
          setBusy(true);
          try {
            await props.onConfirm();
          } finally {
            setBusy(false);
            setAsking(false);
          }
        }}
      >
        {props.confirmText ?? 'Confirm'}
      </Button>
      <Button variant="link" onClick={() => setAsking(false)}>
        Cancel
      </Button>
    </span>
  );
}
