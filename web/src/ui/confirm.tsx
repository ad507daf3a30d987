// Confirmation in place, no browser dialog: ConfirmPrompt is the question with its two buttons (focus
// moves to the confirm button, Escape or the cancel button backs out; role alertdialog so it is
// announced), for a caller that decides when to ask; ConfirmButton is a button that asks with it
// before a destructive action. The one confirmation of the app (manage and autonomous had their own).
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { Button } from './button.tsx';
import './confirm.css';

export function ConfirmPrompt(props: {
  question: ComponentChildren;
  confirmLabel?: string;
  cancelLabel?: string;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
  /** Inline (a row's action cell) or a panel under the controls. */
  inline?: boolean;
  class?: string;
}) {
  const ref = useRef<HTMLElement>(null);
  useEffect(() => {
    ref.current?.querySelector<HTMLButtonElement>('button.btn-danger')?.focus();
  }, []);
  const Tag = props.inline ? 'span' : 'div';
  const Question = props.inline ? 'span' : 'p';
  return (
    <Tag
      ref={ref as never}
      class={props.class ?? (props.inline ? 'confirm' : 'confirm-panel')}
      role="alertdialog"
      aria-label="Confirm"
      onKeyDown={(e) => {
        if (e.key === 'Escape') props.onCancel();
      }}
    >
      <Question>{props.question}</Question>
      <Button variant="danger" busy={props.busy} onClick={props.onConfirm}>
        {props.confirmLabel ?? 'Confirm'}
      </Button>
      <Button variant="link" onClick={props.onCancel}>
        {props.cancelLabel ?? 'Cancel'}
      </Button>
    </Tag>
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
    <ConfirmPrompt
      inline
      question={props.question}
      confirmLabel={props.confirmText}
      busy={busy}
      onCancel={() => setAsking(false)}
      onConfirm={async () => {
        setBusy(true);
        try {
          await props.onConfirm();
        } finally {
          setBusy(false);
          setAsking(false);
        }
      }}
    />
  );
}
