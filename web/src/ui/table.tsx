// Table: columns described once, rows rendered as a real <table> with a caption; an empty state row
// when there is nothing to show.
import type { ComponentChildren } from 'preact';

export interface Column<T> {
  key: string;
  header: string;
  render?: (row: T) => ComponentChildren;
  /** Right-align numbers. */
  numeric?: boolean;
}

export function Table<T>(props: {
  caption: string;
  columns: Column<T>[];
  rows: T[];
  rowKey: (row: T, i: number) => string | number;
  empty?: ComponentChildren;
}) {
  const { caption, columns, rows, rowKey, empty = 'Nothing to show yet.' } = props;
  return (
    <div class="table-wrap">
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.key} scope="col" class={c.numeric ? 'num' : undefined}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr>
              <td colSpan={columns.length} class="empty">
                {empty}
              </td>
            </tr>
          ) : (
            rows.map((row, i) => (
              <tr key={rowKey(row, i)}>
                {columns.map((c) => (
                  <td key={c.key} class={c.numeric ? 'num' : undefined}>
                    {c.render ? c.render(row) : String((row as Record<string, unknown>)[c.key] ?? '')}
                  </td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}
