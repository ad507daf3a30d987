// Small pieces the autonomous pages share: the status badge, a labelled select and textarea (the ui
// kit's Field is for <input>), an inline confirmation for destructive controls (focus moves to it,
// Escape or "Keep it" cancels), a unified diff and a per-file stats table.
import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';
import { Button, formatNumber, Table } from '../../ui/index.ts';
import { diffLines, type FileStat, statusLabel, statusTone } from './model.ts';
import './autonomous.css';

export function StatusBadge({ status, pausedBy }: { status: string; pausedBy?: string | null }) {
  return (
    <span class={`aw-badge aw-badge-${statusTone(status)}`} data-status={status}>
      {statusLabel(status, pausedBy)}
    </span>
  );
}

export function SelectField(props: {
  label: string;
  value: string;
  onValue: (v: string) => void;
  options: readonly { value: string; label: string }[];
  hint?: string;
}) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select
        id={id}
        value={props.value}
        onChange={(e) => props.onValue(e.currentTarget.value)}
        aria-describedby={props.hint ? `${id}-hint` : undefined}
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

export function TextAreaField(props: {
  label: string;
  value: string;
  onValue: (v: string) => void;
  rows?: number;
  hint?: string;
  error?: string | null;
  maxLength?: number;
}) {
  const id = useId();
  const describedBy = [props.hint ? `${id}-hint` : '', props.error ? `${id}-error` : '']
    .filter(Boolean)
    .join(' ');
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <textarea
        id={id}
        rows={props.rows ?? 4}
        value={props.value}
        maxLength={props.maxLength}
        onInput={(e) => props.onValue(e.currentTarget.value)}
        aria-invalid={props.error ? 'true' : undefined}
        aria-describedby={describedBy || undefined}
      />
      {props.hint && (
        <div class="field-hint" id={`${id}-hint`}>
          {props.hint}
        </div>
      )}
      {props.error && (
        <div class="field-error" id={`${id}-error`}>
          {props.error}
        </div>
      )}
    </div>
  );
}

/** An inline "are you sure" with the consequence in words; the confirm button is focused. */
export function Confirm(props: {
  question: string;
  confirmLabel: string;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    ref.current?.querySelector<HTMLButtonElement>('button.btn-danger')?.focus();
  }, []);
  return (
    <div
      ref={ref}
      class="aw-panel notice"
      role="alertdialog"
      aria-label="Confirm"
      onKeyDown={(e) => {
        if (e.key === 'Escape') props.onCancel();
      }}
    >
      <p>{props.question}</p>
      <div class="aw-controls">
        <Button variant="danger" busy={props.busy} onClick={props.onConfirm}>
          {props.confirmLabel}
        </Button>
        <Button onClick={props.onCancel}>Keep it</Button>
      </div>
    </div>
  );
}

export function DiffView({ diff, label }: { diff: string; label: string }) {
  const lines = diffLines(diff);
  if (lines.length === 0) return <p class="muted">No changes.</p>;
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard
    <section class="aw-diff" aria-label={label} tabIndex={0}>
      <pre>
        {lines.map((l, i) => (
          <div key={i} class={`d-${l.kind}`}>
            {l.text || ' '}
          </div>
        ))}
      </pre>
    </section>
  );
}

export function FileStats({ files, caption }: { files: FileStat[]; caption: string }) {
  return (
    <Table
      caption={caption}
      rows={files}
      rowKey={(f) => f.path}
      empty="No files changed."
      columns={[
        { key: 'path', header: 'File' },
        {
          key: 'additions',
          header: 'Added',
          numeric: true,
          render: (f) => <span class="aw-add">+{formatNumber(f.additions)}</span>,
        },
        {
          key: 'deletions',
          header: 'Deleted',
          numeric: true,
          render: (f) => <span class="aw-del">−{formatNumber(f.deletions)}</span>,
        },
      ]}
    />
  );
}

export function Facts({ items }: { items: [string, ComponentChildren][] }) {
  return (
    <dl class="aw-facts">
      {items.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}
