// The first-run panel of the dashboard: on an install without usage, instead of bare zeros, the next
// steps the viewer can take (first-run-steps.ts decides which), each with its link.
import { useAuth } from '../../auth/session.tsx';
import { firstRunSteps } from './first-run-steps.ts';

export function FirstRun() {
  const { viewer } = useAuth();
  if (!viewer) return null;
  const steps = firstRunSteps(viewer);
  return (
    <section class="first-run" aria-labelledby="first-run-h" data-first-run="true">
      <h2 id="first-run-h">No usage recorded yet</h2>
      {steps.length === 0 ? (
        <p>Nothing has been recorded yet. Figures appear here once your team's usage is uploaded.</p>
      ) : (
        <>
          <p>Figures appear here once usage is recorded. To get started:</p>
          <ol class="first-run-steps">
            {steps.map((s) => (
              <li key={s.key} data-step={s.key}>
                <strong>{s.title}.</strong> {s.text}{' '}
                {s.links.map((l, i) => (
                  <span key={l.href}>
                    {i > 0 && ' · '}
                    <a href={l.href}>{l.label}</a>
                  </span>
                ))}
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  );
}
