// The navigation's menu button below the narrow-screen breakpoint (issue 28 item 6): it shows and
// hides the nav (aria-expanded, aria-controls), Escape closes the open nav and returns focus to the
// button, and the shell closes it on every navigation. Above the breakpoint CSS hides the button and
// the nav is always shown.
import { useEffect, useRef } from 'preact/hooks';

export const NAV_ID = 'app-nav';

export function MenuButton({ open, onToggle }: { open: boolean; onToggle: (open: boolean) => void }) {
  const button = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      onToggle(false);
      button.current?.focus();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [open, onToggle]);
  return (
    <button
      ref={button}
      type="button"
      class="btn btn-secondary menu-button"
      aria-controls={NAV_ID}
      aria-expanded={open ? 'true' : 'false'}
      onClick={() => onToggle(!open)}
    >
      Menu
    </button>
  );
}
