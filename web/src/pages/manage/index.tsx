// /manage: the administration overview: one entry per section the signed-in user may open
// (auth/access.ts) with what it holds.
import { manageSectionsFor } from '../../auth/access.ts';
import { useAuth } from '../../auth/session.tsx';
import { ManagePage } from './layout.tsx';

export default function ManageIndex() {
  const { viewer } = useAuth();
  return (
    <ManagePage title="Administration">
      <ul class="stat-list">
        {(viewer ? manageSectionsFor(viewer) : []).map((s) => (
          <li key={s.path} class="panel">
            <a href={s.path}>{s.title}</a>
            <p class="muted">{s.what}</p>
          </li>
        ))}
      </ul>
    </ManagePage>
  );
}
