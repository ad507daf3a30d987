// Small pieces the autonomous pages share: the status badge, a unified diff, a per-file stats table
// and a list of facts. (Select, textarea and the in-place confirmation are the ui kit's.)
import type { ComponentChildren } from 'preact';
import { formatNumber, Table } from '../../ui/index.ts';
import { diffLines, type FileStat, statusLabel, statusTone } from './model.ts';
import './autonomous.css';

export function StatusBadge({ status, pausedBy }: { status: string; pausedBy?: string | null }) {
  return (
    <span class={`aw-badge aw-badge-${statusTone(status)}`} data-status={status}>
      {statusLabel(status, pausedBy)}
    </span>
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
