// The frame of every /manage page: the heading, the section tabs (only the sections the signed-in
// user may open: auth/access.ts) and a status line for the last action. The shell (app.tsx) answers
// a section the user may not open with a message instead of the page.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { manageSectionsFor } from '../../auth/access.ts';
import { useAuth } from '../../auth/session.tsx';
import './manage.css';

export function ManageTabs() {
  const { path } = useLocation();
  const { viewer } = useAuth();
  const sections = viewer ? manageSectionsFor(viewer) : [];
  return (
    <nav class="manage-tabs" aria-label="Administration">
      <ul>
        {sections.map((s) => (
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
