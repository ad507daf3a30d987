// The frame of every /manage page: the heading, the section tabs (one per administration area) and a
// status line for the last action. Only system administrators get here (app.tsx guards /manage/*).
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import './manage.css';

export const MANAGE_SECTIONS = [
  { path: '/manage/users', title: 'Users' },
  { path: '/manage/tenants', title: 'Tenants' },
  { path: '/manage/machines', title: 'Machines' },
  { path: '/manage/keys', title: 'Provider keys' },
  { path: '/manage/sso', title: 'Single sign-on' },
  { path: '/manage/filters', title: 'Filter rules' },
  { path: '/manage/security', title: 'Security settings' },
  { path: '/manage/audit', title: 'Audit log' },
  { path: '/manage/compliance', title: 'Compliance' },
] as const;

export function ManageTabs() {
  const { path } = useLocation();
  return (
    <nav class="manage-tabs" aria-label="Administration">
      <ul>
        {MANAGE_SECTIONS.map((s) => (
          <li key={s.path}>
            <a href={s.path} aria-current={path === s.path ? 'page' : undefined}>
              {s.title}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

export function ManagePage({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <section>
      <h1>{title}</h1>
      <ManageTabs />
      {children}
    </section>
  );
}

/** A short success message for the last action (announced politely). */
export function Done({ message }: { message: string | null }) {
  if (!message) return null;
  return (
    <div class="success-box" role="status">
      {message}
    </div>
  );
}

/**
 * For a panel that opens from a table row: its heading takes focus and scrolls into view, so keyboard
 * and screen-reader users land in the form they asked for. Put the ref on an element with tabIndex -1;
 * `ready` false while the panel still loads.
 */
export function useFocusOnOpen<T extends HTMLElement>(ready = true) {
  const ref = useRef<T>(null);
  const done = useRef(false);
  useEffect(() => {
    if (!ready || done.current || !ref.current) return;
    done.current = true;
    ref.current.focus();
    ref.current.scrollIntoView?.({ block: 'start' });
  }, [ready]);
  return ref;
}
