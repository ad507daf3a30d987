// Pager: "Previous page / 1–50 of 120 / Next page" for a list the API pages with limit and offset.
// Renders nothing when everything fits on one page.
import { Button } from './button.tsx';
import { formatNumber } from './format.ts';

export function Pager(props: {
  offset: number;
  total: number;
  pageSize: number;
  onOffset: (offset: number) => void;
}) {
  const { offset, total, pageSize, onOffset } = props;
  if (total <= pageSize) return null;
  return (
    <nav class="pager" aria-label="Pages">
      <Button disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - pageSize))}>
        Previous page
      </Button>
      <span class="muted">
        {formatNumber(offset + 1)}–{formatNumber(Math.min(total, offset + pageSize))} of {formatNumber(total)}
      </span>
      <Button disabled={offset + pageSize >= total} onClick={() => onOffset(offset + pageSize)}>
        Next page
      </Button>
    </nav>
  );
}
