// FieldFrame: what every labelled control shares (Field, TextareaField, SelectField): the label wired
// to the control by id, then a hint and an error the control names in aria-describedby, so both are
// announced with it. useFieldIds gives the control its id and that aria-describedby.
import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';

export function useFieldIds(hint?: string, error?: string | null) {
  const id = useId();
  const describedBy = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return { id, describedBy: describedBy || undefined, invalid: error ? ('true' as const) : undefined };
}

export function FieldFrame(props: {
  id: string;
  label: string;
  hint?: string;
  error?: string | null;
  children: ComponentChildren;
}) {
  const { id, label, hint, error, children } = props;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children}
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
